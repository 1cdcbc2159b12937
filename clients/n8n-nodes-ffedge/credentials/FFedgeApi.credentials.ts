import type { IAuthenticateGeneric, ICredentialTestRequest, ICredentialType, INodeProperties } from 'n8n-workflow';

/** An ffedge API key and the deployment it belongs to; n8n accepts it when GET /v1/me answers 2xx. */
export class FFedgeApi implements ICredentialType {
	name = 'ffedgeApi';

	displayName = 'ffedge API';

	icon = 'file:../nodes/FFedge/ffedge.svg' as const;

	documentationUrl = 'https://github.com/ffedge/ffedge/tree/main/clients/n8n-nodes-ffedge#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			placeholder: 'https://api.example.com',
			required: true,
			description: 'Where your ffedge deployment answers; a trailing /v1 is accepted',
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description: 'A key made with `npm run keys` or in the console (ffe_…)',
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: { Authorization: '=Bearer {{$credentials.apiKey}}' },
		},
	};

	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "").replace(/\\/v1$/, "")}}',
			url: '/v1/me',
			method: 'GET',
		},
	};
}
