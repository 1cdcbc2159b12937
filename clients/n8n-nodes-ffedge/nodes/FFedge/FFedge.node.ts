import type {
	IExecuteFunctions,
	ILoadOptionsFunctions,
	INodeExecutionData,
	INodePropertyOptions,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';
import { ffedgeRequest } from '../shared/api';
import { runOperation } from './operations';
import { properties } from './properties';

export class FFedge implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'ffedge',
		name: 'ffedge',
		icon: 'file:ffedge.svg',
		group: ['transform'],
		version: 1,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description: 'Run ffmpeg commands and presets on ffedge, upload files, read tasks',
		defaults: { name: 'ffedge' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'ffedgeApi', required: true }],
		properties,
	};

	methods = {
		loadOptions: {
			async getPresets(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
				const page = (await ffedgeRequest.call(this, 'GET', '/v1/presets', { qs: { limit: 100 } })) as {
					presets: { id: string; name: string; description?: string | null; builtin?: boolean }[];
				};
				return page.presets.map((preset) => ({
					name: preset.builtin ? `${preset.name} (built-in)` : preset.name,
					value: preset.name,
					description: preset.description ?? undefined,
				}));
			},
		},
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const output: INodeExecutionData[] = [];
		for (let item = 0; item < this.getInputData().length; item++) {
			try {
				output.push(...(await runOperation.call(this, item)));
			} catch (error) {
				if (!this.continueOnFail()) throw error;
				output.push({ json: { error: (error as Error).message, description: (error as { description?: string }).description ?? null }, pairedItem: { item } });
			}
		}
		return [output];
	}
}
