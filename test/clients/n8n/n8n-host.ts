import { once } from "node:events";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { ExecuteContext, HookContext, PackageDirectoryLoader, WebhookContext } from "n8n-core";
import {
  type IAuthenticateGeneric,
  type ICredentialDataDecryptedObject,
  type ICredentialType,
  type IDataObject,
  type IHttpRequestOptions,
  type INode,
  type INodeExecutionData,
  type INodeType,
  type INodeTypes,
  type IWebhookData,
  type IWorkflowExecuteAdditionalData,
  ICredentialsHelper,
  Workflow,
  createEmptyRunExecutionData,
} from "n8n-workflow";

/**
 * A stand-in for the n8n server around the package as it ships: its dist/ (built by this
 * folder's globalSetup) loaded by n8n-core's PackageDirectoryLoader, which reads the package's
 * `n8n` section, requires each file, validates each description and resolves the icons, as n8n
 * does for an installed community package. The nodes then run in n8n-workflow's Workflow (node
 * defaults, static data, expressions) through n8n-core's own ExecuteContext, HookContext and
 * WebhookContext with their real request and binary helpers (axios, n8n's error types). What
 * n8n's CLI package would add is written here, small and said plainly: the credentials store
 * (the credential held in memory, its `authenticate` applied the way n8n's CredentialsHelper
 * does, with n8n-workflow's expression resolver), the credential test (its request resolved the
 * same way and sent through n8n-core's helper), and the webhook HTTP server (node:http with an
 * express-like response, passing the raw body and the parsed one as n8n's body parser does).
 */

export const PACKAGE_DIR = resolve(import.meta.dirname, "../../../clients/n8n-nodes-ffedge");
const PACKAGE = "n8n-nodes-ffedge";
export const ACTION_TYPE = `${PACKAGE}.ffedge`;
export const TRIGGER_TYPE = `${PACKAGE}.ffedgeTrigger`;

export const loader = new PackageDirectoryLoader(PACKAGE_DIR);
await loader.loadAll();

/** n8n's NodeTypes service, for one package: `<package>.<node name>` to the loaded node. */
class PackageNodeTypes implements INodeTypes {
  getByName(type: string): INodeType {
    return this.getByNameAndVersion(type);
  }

  getByNameAndVersion(type: string): INodeType {
    const [packageName, name] = type.split(".");
    if (packageName !== PACKAGE || !name) throw new Error(`unknown node type ${type}`);
    return loader.getNode(name).type as INodeType;
  }

  getKnownTypes() {
    return loader.known.nodes;
  }
}

/** Resolves `={{ … }}` values against `$credentials` with n8n-workflow's expression engine, as n8n's CredentialsHelper does. */
function resolveWithCredentials(workflow: Workflow, node: INode, value: unknown, credentials: ICredentialDataDecryptedObject): unknown {
  if (typeof value !== "string" || !value.startsWith("=")) return value;
  return workflow.expression.getSimpleParameterValue(node, value, "internal", { $credentials: credentials }, undefined, "");
}

class MemoryCredentialsHelper extends ICredentialsHelper {
  private readonly credentialType: ICredentialType = loader.getCredential("ffedgeApi").type;

  constructor(private readonly data: ICredentialDataDecryptedObject) {
    super();
  }

  getParentTypes(): string[] {
    return [];
  }

  /** n8n lets a node use a credential type that names it among its supported nodes (the loader's `nodesByCredential`). */
  isCredentialUsableByNode(credentialType: string, nodeType: string): boolean {
    const supported = loader.known.credentials[credentialType]?.supportedNodes ?? [];
    return supported.some((name) => nodeType === name || nodeType === `${PACKAGE}.${name}`);
  }

  async authenticate(credentials: ICredentialDataDecryptedObject, typeName: string, requestOptions: IHttpRequestOptions, workflow: Workflow, node: INode): Promise<IHttpRequestOptions> {
    if (typeName !== this.credentialType.name) throw new Error(`no credential type ${typeName}`);
    const authenticate = this.credentialType.authenticate as IAuthenticateGeneric;
    const headers = { ...requestOptions.headers };
    for (const [name, value] of Object.entries(authenticate.properties.headers ?? {})) headers[name] = resolveWithCredentials(workflow, node, value, credentials) as string;
    return { ...requestOptions, headers };
  }

  async preAuthentication(): Promise<undefined> {
    return undefined;
  }

  async runPreAuthentication(): Promise<undefined> {
    return undefined;
  }

  async getCredentials(): Promise<never> {
    throw new Error("encrypted credentials are not used here");
  }

  async getDecrypted(): Promise<ICredentialDataDecryptedObject> {
    return { ...this.data };
  }

  async updateCredentials(): Promise<void> {}

  async updateCredentialsOauthTokenData(): Promise<void> {}

  getCredentialsProperties() {
    return this.credentialType.properties;
  }
}

export interface Host {
  workflow: Workflow;
  node: INode;
  additionalData: IWorkflowExecuteAdditionalData;
}

/** One workflow holding one of the package's nodes, with the credential { baseUrl, apiKey }. */
export function host(type: string, parameters: Record<string, unknown>, credentials: { baseUrl: string; apiKey: string }, webhookBaseUrl = "http://127.0.0.1:9/webhook"): Host {
  const nodeTypes = new PackageNodeTypes();
  const node: INode = {
    id: "4b1d6a52-1f7e-4c56-9a3e-0d7f3c2b9e11",
    name: type === TRIGGER_TYPE ? "ffedge Trigger" : "ffedge",
    type,
    typeVersion: 1,
    position: [0, 0],
    parameters: parameters as INode["parameters"],
    credentials: { ffedgeApi: { id: "1", name: "ffedge account" } },
    ...(type === TRIGGER_TYPE ? { webhookId: "8f14e45f-ceea-467f-a0e6-7a1b2c3d4e5f" } : {}),
  };
  const workflow = new Workflow({ id: "wf1", name: "ffedge test", nodes: [node], connections: {}, active: true, nodeTypes, staticData: {}, settings: {} });
  const additionalData = {
    credentialsHelper: new MemoryCredentialsHelper(credentials),
    executionId: `exec-${Math.random().toString(36).slice(2, 10)}`,
    webhookBaseUrl,
    webhookTestBaseUrl: webhookBaseUrl.replace(/webhook$/, "webhook-test"),
    webhookWaitingBaseUrl: webhookBaseUrl.replace(/webhook$/, "webhook-waiting"),
    formWaitingBaseUrl: webhookBaseUrl.replace(/webhook$/, "form-waiting"),
    restApiUrl: "http://127.0.0.1:9/rest",
    instanceBaseUrl: "http://127.0.0.1:9/",
    variables: {},
    currentNodeParameters: undefined,
  } as unknown as IWorkflowExecuteAdditionalData;
  return { workflow, node: workflow.getNode(node.name)!, additionalData };
}

/** Runs the action node's execute() once over `items`, as n8n's WorkflowExecute would for one node. */
export async function execute(h: Host, items: INodeExecutionData[] = [{ json: {} }]): Promise<INodeExecutionData[]> {
  const executeData = { node: h.node, data: { main: [items] }, source: null };
  const context = new ExecuteContext(h.workflow, h.node, h.additionalData, "manual", createEmptyRunExecutionData(), 0, items, { main: [items] }, executeData, []);
  const nodeType = h.workflow.nodeTypes.getByNameAndVersion(h.node.type, 1);
  const output = await nodeType.execute!.call(context);
  return (output as INodeExecutionData[][])[0]!;
}

/**
 * Runs the credential's test request as n8n's credentials tester does: its expressions resolved
 * against the credential, authenticated, and sent; 2xx accepts the credential.
 */
export async function testCredential(h: Host): Promise<{ status: "OK" | "Error"; message: string }> {
  const credentials = await h.additionalData.credentialsHelper.getDecrypted(h.additionalData, { id: "1", name: "ffedge account" }, "ffedgeApi", "manual");
  const test = loader.getCredential("ffedgeApi").type.test!.request;
  const request: IHttpRequestOptions = {
    method: test.method ?? "GET",
    baseURL: resolveWithCredentials(h.workflow, h.node, test.baseURL, credentials) as string,
    url: resolveWithCredentials(h.workflow, h.node, test.url, credentials) as string,
  };
  const context = new ExecuteContext(h.workflow, h.node, h.additionalData, "internal", createEmptyRunExecutionData(), 0, [], { main: [[]] }, { node: h.node, data: { main: [[]] }, source: null }, []);
  try {
    await context.helpers.httpRequestWithAuthentication.call(context, "ffedgeApi", request);
    return { status: "OK", message: "Connection successful!" };
  } catch (error) {
    return { status: "Error", message: (error as Error).message };
  }
}

/** Activation or deactivation: checkExists, then create (activate) or delete (deactivate), as n8n's ActiveWorkflows does per webhook. */
export async function hook(h: Host, method: "checkExists" | "create" | "delete", activation: "activate" | "manual" = "activate"): Promise<boolean> {
  const nodeType = h.workflow.nodeTypes.getByNameAndVersion(h.node.type, 1);
  const webhookData = webhookDataOf(h);
  const context = new HookContext(h.workflow, h.node, h.additionalData, "trigger", activation, webhookData);
  return (await nodeType.webhookMethods!.default![method]!.call(context)) ?? false;
}

function webhookDataOf(h: Host): IWebhookData {
  const nodeType = h.workflow.nodeTypes.getByNameAndVersion(h.node.type, 1);
  const description = nodeType.description.webhooks![0]!;
  return {
    httpMethod: "POST",
    node: h.node.name,
    path: `${h.node.webhookId}/${String(description.path)}`,
    webhookDescription: description,
    workflowId: h.workflow.id,
    workflowExecuteAdditionalData: h.additionalData,
  } as IWebhookData;
}

/** An express-like response over node's, with the methods a node's webhook() may call. */
function expressResponse(response: ServerResponse) {
  const adapter = {
    status(code: number) {
      response.statusCode = code;
      return adapter;
    },
    json(body: unknown) {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify(body));
      return adapter;
    },
    send(body: unknown) {
      response.end(typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body));
      return adapter;
    },
    end(body?: string) {
      response.end(body);
      return adapter;
    },
    setHeader(name: string, value: string) {
      response.setHeader(name, value);
      return adapter;
    },
    get headersSent() {
      return response.headersSent;
    },
  };
  return adapter;
}

/**
 * n8n's webhook server for one trigger node: a POST to its URL runs the node's webhook() in a
 * WebhookContext; what it emits would start the workflow (responseMode "onReceived": 200 at once).
 */
export class WebhookServer {
  readonly emitted: IDataObject[] = [];
  readonly answers: number[] = [];
  private server: Server | undefined;
  private port = 0;
  host: Host | undefined;

  async listen(): Promise<this> {
    this.server = createServer((request, response) => void this.handle(request, response));
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** n8n's webhookBaseUrl: WEBHOOK_URL plus the "webhook" endpoint, without a trailing slash. */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}/webhook`;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const h = this.host;
    if (!h || request.method !== "POST" || request.url !== `/webhook/${h.node.webhookId}/webhook`) {
      response.writeHead(404).end();
      return;
    }
    const rawBody = Buffer.concat(chunks);
    let body: unknown = {};
    try {
      body = JSON.parse(rawBody.toString("utf8"));
    } catch {
      body = {};
    }
    const req = Object.assign(request, { rawBody, body, query: {}, params: {} });
    const additionalData = { ...h.additionalData, httpRequest: req, httpResponse: expressResponse(response) } as unknown as IWorkflowExecuteAdditionalData;
    const context = new WebhookContext(h.workflow, h.node, additionalData, "webhook", webhookDataOf(h), [], null);
    const nodeType = h.workflow.nodeTypes.getByNameAndVersion(h.node.type, 1);
    try {
      const result = await nodeType.webhook!.call(context);
      if (result.noWebhookResponse) {
        this.answers.push(response.statusCode);
        return;
      }
      for (const items of result.workflowData ?? []) this.emitted.push(...items.map((item) => item.json));
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ message: result.workflowData ? "Workflow was started" : String(result.webhookResponse ?? "") }));
      this.answers.push(200);
    } catch (error) {
      response.writeHead(500).end((error as Error).message);
      this.answers.push(500);
    }
  }

  url(path: string): string {
    return `${this.baseUrl}/${path}`;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, "close");
  }
}
