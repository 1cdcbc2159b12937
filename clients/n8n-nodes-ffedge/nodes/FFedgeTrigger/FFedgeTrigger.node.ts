import type {
	IDataObject,
	IHookFunctions,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeApiError, NodeConnectionTypes } from 'n8n-workflow';
import { ffedgeRequest } from '../shared/api';
import { isSignedDelivery } from '../shared/signature';

interface Endpoint extends IDataObject {
	id: string;
	url: string;
	events: string[];
	enabled: boolean;
}

/** What the trigger keeps in the workflow's static data between activation and deactivation. */
interface Registration extends IDataObject {
	endpointId?: string;
	secret?: string;
}

type RawRequest = { rawBody?: Buffer; readRawBody?: () => Promise<void> };

function selectedEvents(context: IHookFunctions | IWebhookFunctions): string[] {
	return [...(context.getNodeParameter('events', []) as string[])].sort();
}

function isNotFound(error: unknown): boolean {
	return error instanceof NodeApiError && error.httpCode === '404';
}

/** The exact bytes ffedge signed; n8n keeps them on the request beside the parsed body. */
async function rawBody(context: IWebhookFunctions): Promise<Buffer | undefined> {
	const request = context.getRequestObject() as unknown as RawRequest;
	if (!Buffer.isBuffer(request.rawBody) && typeof request.readRawBody === 'function') await request.readRawBody();
	return Buffer.isBuffer(request.rawBody) ? request.rawBody : undefined;
}

export class FFedgeTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'ffedge Trigger',
		name: 'ffedgeTrigger',
		icon: 'file:ffedge.svg',
		group: ['trigger'],
		version: 1,
		subtitle: '={{$parameter["events"].join(", ")}}',
		description: 'Starts the workflow when an ffedge task ends or a file expires',
		defaults: { name: 'ffedge Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'ffedgeApi', required: true }],
		webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'webhook' }],
		properties: [
			{
				displayName: 'Events',
				name: 'events',
				type: 'multiOptions',
				required: true,
				options: [
					{ name: 'Task Completed', value: 'task.completed', description: 'A task of yours ended with its outputs' },
					{ name: 'Task Failed', value: 'task.failed', description: 'A task of yours failed or was canceled' },
					{ name: 'Task Progress', value: 'task.progress', description: 'A task of yours advanced: at most one event per 10 points of progress or per 10 s, the latest only, never after its end' },
					{ name: 'File Expired', value: 'file.expired', description: 'An upload or output of yours was deleted at its expiry' },
				],
				default: ['task.completed', 'task.failed'],
			},
		],
	};

	webhookMethods = {
		default: {
			/** True only for the endpoint this node registered, still there, with this URL and these events: its secret is known. */
			async checkExists(this: IHookFunctions): Promise<boolean> {
				const registration = this.getWorkflowStaticData('node') as Registration;
				if (!registration.endpointId || !registration.secret) return false;
				let endpoint: Endpoint;
				try {
					endpoint = (await ffedgeRequest.call(this, 'GET', `/v1/webhooks/endpoints/${registration.endpointId}`)) as Endpoint;
				} catch (error) {
					if (!isNotFound(error)) throw error;
					delete registration.endpointId;
					delete registration.secret;
					return false;
				}
				const events = [...endpoint.events].sort();
				return endpoint.enabled && endpoint.url === this.getNodeWebhookUrl('default') && events.join() === selectedEvents(this).join();
			},

			/**
			 * Registers the endpoint and keeps its id and secret (shown only in this answer). Endpoints
			 * already registered for this URL go first: their secret is lost with the static data that
			 * held it, or their events are no longer the ones chosen, so their deliveries would be refused.
			 */
			async create(this: IHookFunctions): Promise<boolean> {
				const url = this.getNodeWebhookUrl('default');
				if (!url) return false;
				const registration = this.getWorkflowStaticData('node') as Registration;
				const { endpoints } = (await ffedgeRequest.call(this, 'GET', '/v1/webhooks/endpoints')) as { endpoints: Endpoint[] };
				for (const stale of endpoints.filter((endpoint) => endpoint.url === url)) {
					await ffedgeRequest.call(this, 'DELETE', `/v1/webhooks/endpoints/${stale.id}`).catch((error: unknown) => {
						if (!isNotFound(error)) throw error;
					});
				}
				const workflow = this.getWorkflow();
				const description = `n8n: ${workflow.name ?? workflow.id ?? 'workflow'} / ${this.getNode().name}`.slice(0, 200);
				const created = await ffedgeRequest.call(this, 'POST', '/v1/webhooks/endpoints', { body: { url, events: selectedEvents(this), description } });
				if (typeof created.id !== 'string' || typeof created.secret !== 'string') return false;
				registration.endpointId = created.id;
				registration.secret = created.secret;
				return true;
			},

			async delete(this: IHookFunctions): Promise<boolean> {
				const registration = this.getWorkflowStaticData('node') as Registration;
				if (registration.endpointId) {
					try {
						await ffedgeRequest.call(this, 'DELETE', `/v1/webhooks/endpoints/${registration.endpointId}`);
					} catch (error) {
						if (!isNotFound(error)) return false;
					}
				}
				delete registration.endpointId;
				delete registration.secret;
				return true;
			},
		},
	};

	/** Emits a delivery whose Standard Webhooks signature matches the endpoint's secret; anything else gets 401 and starts nothing. */
	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const { secret } = this.getWorkflowStaticData('node') as Registration;
		const headers = this.getHeaderData() as Record<string, string | string[] | undefined>;
		const body = await rawBody(this);
		if (!secret || !body || !isSignedDelivery(secret, headers, body)) {
			this.getResponseObject().status(401).json({ code: 'WEBHOOK_SIGNATURE_INVALID', detail: 'The webhook signature does not match this endpoint’s secret.' });
			return { noWebhookResponse: true };
		}
		const event = String(headers['webhook-event'] ?? '');
		if (!selectedEvents(this).includes(event)) return { webhookResponse: 'ignored' };
		const payload = JSON.parse(body.toString('utf8')) as IDataObject;
		return { workflowData: [this.helpers.returnJsonArray({ event, webhook_id: String(headers['webhook-id']), ...payload })] };
	}
}
