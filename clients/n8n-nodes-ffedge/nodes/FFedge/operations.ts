import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';
import { ffedgeRequest } from '../shared/api';

interface Task extends IDataObject {
	task_id: string;
	status: 'pending' | 'running' | 'completed' | 'failed';
	error?: string;
	error_code?: string;
}

interface RunOptions {
	withMetadata?: boolean;
	timeoutSeconds?: number;
	webhook?: string;
	pollSeconds?: number;
	maxWaitSeconds?: number;
	failOnTaskFailure?: boolean;
}

const ENDED = new Set(['completed', 'failed']);

/** POST /v1/tasks with the body of a command or a preset run, then the task as `wait` asks. */
async function submit(this: IExecuteFunctions, item: number, body: IDataObject): Promise<Task> {
	const options = this.getNodeParameter('options', item, {}) as RunOptions;
	if (options.withMetadata) body.with_metadata = true;
	if (options.timeoutSeconds) body.timeout_seconds = options.timeoutSeconds;
	if (options.webhook) body.webhook = options.webhook;
	const created = await ffedgeRequest.call(this, 'POST', '/v1/tasks', { body, headers: idempotencyKey(this, item) });
	const taskId = String(created.task_id);
	if (!this.getNodeParameter('wait', item, true)) return (await ffedgeRequest.call(this, 'GET', `/v1/tasks/${taskId}`)) as Task;
	const task = await waitForEnd.call(this, taskId, options);
	if (task.status === 'failed' && options.failOnTaskFailure !== false) {
		throw new NodeOperationError(this.getNode(), `Task ${taskId} failed: ${task.error_code ?? 'FAILED'}`, {
			description: task.error ?? '',
			itemIndex: item,
		});
	}
	return task;
}

/**
 * The same key for the same item of the same execution: n8n's "Retry On Fail" then gets the task
 * it already submitted instead of a second one (docs/uploads.md, "Idempotency").
 */
function idempotencyKey(context: IExecuteFunctions, item: number): Record<string, string> {
	const executionId = context.getExecutionId();
	if (!executionId) return {};
	return { 'idempotency-key': `n8n-${context.getWorkflow().id ?? 'workflow'}-${executionId}-${context.getNode().id}-${item}` };
}

async function waitForEnd(this: IExecuteFunctions, taskId: string, options: RunOptions): Promise<Task> {
	const deadline = Date.now() + (options.maxWaitSeconds ?? 3600) * 1000;
	const interval = Math.max(0.2, options.pollSeconds ?? 2) * 1000;
	const signal = this.getExecutionCancelSignal?.();
	for (;;) {
		const task = (await ffedgeRequest.call(this, 'GET', `/v1/tasks/${taskId}`)) as Task;
		if (ENDED.has(task.status)) return task;
		if (signal?.aborted) throw new NodeOperationError(this.getNode(), `Stopped waiting for task ${taskId}: the execution was canceled`);
		if (Date.now() + interval > deadline) {
			throw new NodeOperationError(this.getNode(), `Task ${taskId} did not end within ${options.maxWaitSeconds ?? 3600} s`, {
				description: `It is still ${task.status}; read it later with the Get operation.`,
			});
		}
		await sleep(interval);
	}
}

function presetParams(this: IExecuteFunctions, item: number): IDataObject {
	const raw = this.getNodeParameter('params', item, '{}') as string | IDataObject;
	if (typeof raw !== 'string') return raw;
	try {
		const value = JSON.parse(raw || '{}') as unknown;
		if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as IDataObject;
	} catch {
		// Reported below with the parameter's name.
	}
	throw new NodeOperationError(this.getNode(), 'Parameters (JSON) must be a JSON object', { itemIndex: item });
}

/** Presigned upload (POST /v1/uploads/sign, then PUT): no multipart envelope, and in production the bytes go straight to storage. */
async function upload(this: IExecuteFunctions, item: number): Promise<INodeExecutionData> {
	const property = this.getNodeParameter('binaryPropertyName', item) as string;
	const binary = this.helpers.assertBinaryData(item, property);
	const bytes = await this.helpers.getBinaryDataBuffer(item, property);
	const contentType = binary.mimeType || 'application/octet-stream';
	const filename = binary.fileName || `${property}${binary.fileExtension ? `.${binary.fileExtension}` : ''}`;
	const signed = await ffedgeRequest.call(this, 'POST', '/v1/uploads/sign', { body: { filename, size: bytes.length, content_type: contentType } });
	const put = (await this.helpers.httpRequest({
		method: 'PUT',
		url: String(signed.upload_url),
		body: bytes,
		headers: { 'content-type': String(signed.content_type ?? contentType) },
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		json: false,
	})) as { statusCode: number; body: unknown };
	if (put.statusCode >= 300) {
		throw new NodeOperationError(this.getNode(), `The upload of ${filename} was refused (HTTP ${put.statusCode})`, {
			description: Buffer.isBuffer(put.body) ? put.body.toString('utf8') : String(put.body ?? ''),
			itemIndex: item,
		});
	}
	return {
		json: { url: signed.public_url, key: signed.key, filename, size: bytes.length, content_type: signed.content_type ?? contentType, expires_at: signed.expires_at },
		pairedItem: { item },
	};
}

/** The items one input item yields for the chosen resource and operation. */
export async function runOperation(this: IExecuteFunctions, item: number): Promise<INodeExecutionData[]> {
	const resource = this.getNodeParameter('resource', item) as string;
	const operation = this.getNodeParameter('operation', item) as string;
	const one = (json: IDataObject): INodeExecutionData[] => [{ json, pairedItem: { item } }];
	if (resource === 'file') return [await upload.call(this, item)];
	switch (operation) {
		case 'run':
			return one(await submit.call(this, item, { command: this.getNodeParameter('command', item) as string }));
		case 'runPreset':
			return one(await submit.call(this, item, { preset: this.getNodeParameter('preset', item) as string, params: presetParams.call(this, item) }));
		case 'get':
			return one(await ffedgeRequest.call(this, 'GET', `/v1/tasks/${encodeURIComponent(this.getNodeParameter('taskId', item) as string)}`));
		case 'cancel':
			return one(await ffedgeRequest.call(this, 'POST', `/v1/tasks/${encodeURIComponent(this.getNodeParameter('taskId', item) as string)}/cancel`));
		case 'list': {
			const status = this.getNodeParameter('status', item, '') as string;
			const qs: IDataObject = { limit: this.getNodeParameter('limit', item, 50), offset: this.getNodeParameter('offset', item, 0) };
			if (status) qs.status = status;
			const page = (await ffedgeRequest.call(this, 'GET', '/v1/tasks', { qs })) as { tasks: IDataObject[] };
			return page.tasks.map((task) => ({ json: task, pairedItem: { item } }));
		}
		default:
			throw new NodeOperationError(this.getNode(), `Unknown operation ${resource}.${operation}`, { itemIndex: item });
	}
}
