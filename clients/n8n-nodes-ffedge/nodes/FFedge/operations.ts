import type { Readable } from 'node:stream';
import type { IBinaryKeyData, IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';
import { ffedgeRequest } from '../shared/api';

interface Task extends IDataObject {
	task_id: string;
	status: 'pending' | 'running' | 'completed' | 'failed';
	error?: string;
	error_code?: string;
}

interface RunOptions {
	downloadOutputs?: boolean;
	binaryPrefix?: string;
	destination?: string;
	destinationMode?: 'copy' | 'only';
	withMetadata?: boolean;
	timeoutSeconds?: number;
	webhook?: string;
	pollSeconds?: number;
	maxWaitSeconds?: number;
	failOnTaskFailure?: boolean;
}

const ENDED = new Set(['completed', 'failed']);

interface Output {
	filename: string;
	url: string;
}

/** POST /v1/tasks with the body of a command, preset or steps run, then the task as `wait` and the options ask. */
async function submit(this: IExecuteFunctions, item: number, body: IDataObject): Promise<INodeExecutionData> {
	const options = this.getNodeParameter('options', item, {}) as RunOptions;
	if (options.withMetadata) body.with_metadata = true;
	if (options.timeoutSeconds) body.timeout_seconds = options.timeoutSeconds;
	if (options.webhook) body.webhook = options.webhook;
	if (options.destination) body.destination = { id: options.destination, mode: options.destinationMode ?? 'copy' };
	if (options.downloadOutputs && options.destination && options.destinationMode === 'only') {
		throw new NodeOperationError(this.getNode(), 'Download Outputs needs Destination Mode Copy', {
			description: 'With Only, ffedge deletes its copy of each output once your destination has it, so there is nothing here to download.',
			itemIndex: item,
		});
	}
	const created = await ffedgeRequest.call(this, 'POST', '/v1/tasks', { body, headers: idempotencyKey(this, item) });
	return follow.call(this, item, String(created.task_id), options);
}

/** The submitted task, or with `wait` the ended one (and its files with Download Outputs); a failure stops the node unless told not to. */
async function follow(this: IExecuteFunctions, item: number, taskId: string, options: RunOptions): Promise<INodeExecutionData> {
	if (!this.getNodeParameter('wait', item, true)) return { json: await ffedgeRequest.call(this, 'GET', `/v1/tasks/${taskId}`), pairedItem: { item } };
	const task = await waitForEnd.call(this, taskId, options);
	if (task.status === 'failed' && options.failOnTaskFailure !== false) {
		throw new NodeOperationError(this.getNode(), `Task ${taskId} failed: ${task.error_code ?? 'FAILED'}`, {
			description: task.error ?? '',
			itemIndex: item,
		});
	}
	if (task.status !== 'completed' || !options.downloadOutputs) return { json: task, pairedItem: { item } };
	return { json: task, binary: await download.call(this, task, options.binaryPrefix || 'output'), pairedItem: { item } };
}

/**
 * Each output streamed from its CDN URL into n8n's binary store (its filesystem or S3 mode keeps
 * large files out of memory), as PREFIX_0, PREFIX_1, … in the task's order of outputs.
 */
async function download(this: IExecuteFunctions, task: IDataObject, prefix: string, names?: string[]): Promise<IBinaryKeyData> {
	const destination = task.destination as { id: string; mode: string } | undefined;
	if (destination?.mode === 'only') {
		throw new NodeOperationError(this.getNode(), `Task ${String(task.task_id)} delivered its outputs only to destination ${destination.id}`, {
			description: 'ffedge keeps no copy of them to download: read them from that bucket.',
		});
	}
	const outputs = ((task.outputs ?? []) as Output[]).filter((output) => !names?.length || names.includes(output.filename));
	const missing = names?.filter((name) => !outputs.some((output) => output.filename === name)) ?? [];
	if (missing.length) throw new NodeOperationError(this.getNode(), `Task ${String(task.task_id)} has no output named ${missing.join(', ')}`);
	const binary: IBinaryKeyData = {};
	for (const [index, output] of outputs.entries()) {
		const body = (await this.helpers.httpRequest({ method: 'GET', url: output.url, encoding: 'stream' })) as Readable;
		binary[`${prefix}_${index}`] = await this.helpers.prepareBinaryData(body, output.filename);
	}
	return binary;
}

function steps(this: IExecuteFunctions, item: number): IDataObject[] {
	const collection = this.getNodeParameter('steps', item, {}) as { step?: { command: string; publish?: boolean }[] };
	return (collection.step ?? []).map((step) => (step.publish === false ? { command: step.command, publish: false } : { command: step.command }));
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

const taskIdOf = (context: IExecuteFunctions, item: number) => encodeURIComponent(context.getNodeParameter('taskId', item) as string);

/** The items one input item yields for the chosen resource and operation. */
export async function runOperation(this: IExecuteFunctions, item: number): Promise<INodeExecutionData[]> {
	const resource = this.getNodeParameter('resource', item) as string;
	const operation = this.getNodeParameter('operation', item) as string;
	const one = (json: IDataObject): INodeExecutionData[] => [{ json, pairedItem: { item } }];
	if (resource === 'file') return [await upload.call(this, item)];
	switch (operation) {
		case 'run':
			return [await submit.call(this, item, { command: this.getNodeParameter('command', item) as string })];
		case 'runPreset':
			return [await submit.call(this, item, { preset: this.getNodeParameter('preset', item) as string, params: presetParams.call(this, item) })];
		case 'runSteps':
			return [await submit.call(this, item, { steps: steps.call(this, item) })];
		case 'retry': {
			const created = await ffedgeRequest.call(this, 'POST', `/v1/tasks/${taskIdOf(this, item)}/retry`, { headers: idempotencyKey(this, item) });
			return [await follow.call(this, item, String(created.task_id), this.getNodeParameter('options', item, {}) as RunOptions)];
		}
		case 'download': {
			const task = await ffedgeRequest.call(this, 'GET', `/v1/tasks/${taskIdOf(this, item)}`);
			if (task.status !== 'completed') throw new NodeOperationError(this.getNode(), `Task ${String(task.task_id)} is ${String(task.status)}: only a completed task has outputs to download`, { itemIndex: item });
			const names = (this.getNodeParameter('outputNames', item, '') as string).split(',').map((name) => name.trim()).filter(Boolean);
			return [{ json: task, binary: await download.call(this, task, (this.getNodeParameter('binaryPrefix', item, 'output') as string) || 'output', names), pairedItem: { item } }];
		}
		case 'get':
			return one(await ffedgeRequest.call(this, 'GET', `/v1/tasks/${taskIdOf(this, item)}`));
		case 'cancel':
			return one(await ffedgeRequest.call(this, 'POST', `/v1/tasks/${taskIdOf(this, item)}/cancel`));
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
