// Package extract is Tether's auxiliary semantic extractor: the part of
// continuity preservation that asks a separately configured model which user
// decisions, constraints, rejections and plan acceptances a stretch of
// conversation contains.
//
// The pieces, in the order a turn meets them:
//
//   - [Gate] looks at the new messages only and decides, from cheap local
//     cues, whether a model call could add anything. It never decides what is
//     true.
//   - [Prepare] turns the previous capsule and the new messages into the
//     extractor's input: user messages first, assistant proposals next, small
//     plan tool calls last; tool outputs, images, long code blocks and
//     harness boilerplate left out; secrets redacted ([Redact]); everything
//     fenced as untrusted data and bounded by a token budget.
//   - A [Caller] (OpenAI Chat Completions with strict JSON schema output, or
//     Anthropic Messages with one forced tool) makes the call through the
//     official SDKs with every option explicit, and marks the request as
//     internal so that a route pointing back at Tether cannot recurse.
//   - [Pool] runs calls off the request path on a fixed number of workers,
//     with a bounded queue coalescing per A-leg, admission and settlement
//     through the ledger on the originating principal's account, strict
//     validation of the result, and a bounded barrier ([Pool.Wait]) that the
//     preservation path joins when it needs the result.
//
// The extractor only ever returns typed operations against the previous
// capsule (schema/ops.v2.json); the capsule package enforces the merge rules.
// A result that is malformed, cites a message it was not given, or cites a
// non-user message for an op that changes user intent is discarded whole.
// No input or output text is logged or used as a metric label.
package extract
