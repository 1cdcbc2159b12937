import type {
	IDataObject,
	IExecuteFunctions,
	IHookFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

export const CREDENTIAL = 'ffedgeApi';

type Context = IExecuteFunctions | IHookFunctions | ILoadOptionsFunctions;

interface Problem {
	status?: number;
	code?: string;
	title?: string;
	detail?: string;
	message?: string;
}

/** The credential's base URL without trailing slashes or /v1, so both FFHub-style and plain bases work. */
export async function baseUrl(this: Context): Promise<string> {
	const { baseUrl } = await this.getCredentials<{ baseUrl: string }>(CREDENTIAL);
	return String(baseUrl).replace(/\/+$/, '').replace(/\/v1$/, '');
}

/**
 * One authenticated call to the ffedge API. A non-2xx answer becomes a NodeApiError whose
 * message is the problem's `code: title`, whose description is its `detail` (as every ffedge
 * client shows it) and whose httpCode is the status.
 */
export async function ffedgeRequest(
	this: Context,
	method: IHttpRequestMethods,
	path: string,
	options: { body?: IDataObject; qs?: IDataObject; headers?: Record<string, string> } = {},
): Promise<IDataObject> {
	const request: IHttpRequestOptions = {
		method,
		baseURL: await baseUrl.call(this),
		url: path,
		json: true,
		body: options.body,
		qs: options.qs,
		headers: { accept: 'application/json, application/problem+json', ...options.headers },
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
	};
	const response = (await this.helpers.httpRequestWithAuthentication.call(this, CREDENTIAL, request)) as {
		statusCode: number;
		body: unknown;
	};
	const body = parsed(response.body);
	if (response.statusCode < 400) return typeof body === 'object' && body !== null ? (body as IDataObject) : {};
	throw problemError(this, response.statusCode, body);
}

function parsed(body: unknown): unknown {
	if (typeof body !== 'string' || body === '') return body;
	try {
		return JSON.parse(body) as unknown;
	} catch {
		return body;
	}
}

export function problemError(context: Context, status: number, body: unknown): NodeApiError {
	const problem: Problem = typeof body === 'object' && body !== null ? (body as Problem) : { detail: String(body ?? '') };
	const title = problem.title ?? problem.message ?? `HTTP ${status}`;
	return new NodeApiError(context.getNode(), problem as JsonObject, {
		message: problem.code ? `${problem.code}: ${title}` : title,
		description: problem.detail ?? problem.message ?? '',
		httpCode: String(status),
	});
}
