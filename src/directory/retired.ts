/**
 * Whether the directory has retired the version this client speaks (v1/v2: its documentation
 * marks both Inactive). Read from the answers alone, without a request of its own:
 * - a 410 Gone, on any route;
 * - a 404 on a route that names no resource (POST /stats, POST /server, GET /token, the links),
 *   which can only mean the route itself is gone;
 * - a 404 as the latest answer of every route seen, three routes at least, none of them since
 *   answered 2xx (a bot or a profile that does not exist answers 404 too; three routes together
 *   do not).
 * Once retired, it stays so for the process: it is said once.
 */
import type { EndpointName } from './endpoints.js';

/** Routes whose path names no resource: a 404 there is the route's own. */
const WITHOUT_RESOURCE: ReadonlySet<string> = new Set<EndpointName>([
  'postBotStats',
  'postServer',
  'checkToken',
  'getLinks',
  'createLink',
  'deleteLink',
]);

const ROUTES_TOGETHER = 3;

export class RetirementWatch {
  readonly #last = new Map<string, number>();
  #retired = false;

  /** One answer (a RequestEvent's method, route and status); true the first time it shows retirement. */
  observe(event: { method: string; route: string; status: number | string }): boolean {
    if (this.#retired || typeof event.status !== 'number') return false;
    const { status } = event;
    this.#last.set(event.route, status);
    const gone =
      status === 410 ||
      (status === 404 && WITHOUT_RESOURCE.has(event.method)) ||
      (this.#last.size >= ROUTES_TOGETHER && [...this.#last.values()].every((s) => s === 404 || s === 410));
    if (gone) this.#retired = true;
    return gone;
  }

  get retired(): boolean {
    return this.#retired;
  }
}
