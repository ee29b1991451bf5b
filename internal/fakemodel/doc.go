// Package fakemodel is a scripted model provider served over real HTTP on
// loopback. It speaks the three wire dialects Tether proxies — OpenAI Chat
// Completions, OpenAI Responses and Anthropic Messages — closely enough that the
// official SDKs and the real coding-agent CLIs accept its answers, streamed
// (SSE) or unary.
//
// A Responder decides what each request gets back (text, tool calls, usage, an
// opaque compaction item, an HTTP error, a slow or broken stream, a hang, or a
// raw malformed body); the Server records every inbound request, in arrival
// order, before the Responder runs. Classify labels a request as a compaction,
// a title request or a main turn from the agents' stable markers, so a script
// can answer each kind differently.
//
// The package is standalone: it imports nothing from the rest of Tether.
package fakemodel
