import { DurableObject } from "cloudflare:workers";
export class TaskObject extends DurableObject<Env> {}
