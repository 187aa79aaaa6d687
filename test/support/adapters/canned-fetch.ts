// The network under an SDK client, stubbed: each request is answered with the next canned JSON
// body, and every request is recorded (its URL and parsed JSON body), so a test drives the
// package's real client and asserts exactly what it sent. Nothing leaves the machine.

/** One request the client sent. */
export interface SentRequest {
  url: string
  body: unknown
}

/** A `fetch` answering with `bodies` in order (one per request), and the requests it saw. */
export function cannedFetch(bodies: readonly unknown[]): { fetch: typeof fetch; requests: SentRequest[] } {
  const requests: SentRequest[] = []
  const stub = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const text = typeof init?.body === 'string' ? init.body : ''
    requests.push({
      url: String(input instanceof Request ? input.url : input),
      body: text ? JSON.parse(text) : undefined,
    })
    const body = bodies[requests.length - 1]
    if (body === undefined) return new Response('{"error":{"message":"no canned response left"}}', { status: 500 })
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } })
  }
  return { fetch: stub as typeof fetch, requests }
}
