// Package ledger records every B-leg, primary and auxiliary, against the
// principal that caused it, prices it, and admits or refuses new B-legs
// against the configured budgets.
//
// # Attribution
//
// Every upstream call is one ledger entry of kind primary or
// continuity_extraction, attributed to the principal and account whose
// session caused it. Continuity extraction is real, billable inference that
// the proxy makes on the user's behalf: it goes through the same budgets and
// shows up in the same totals, split out by kind so its cost is visible.
// There is no system or operator account: a Charge without a principal is
// refused (ErrInvalidCharge), and a budget refusal of an extraction call is
// final (the caller skips the extraction; nothing is re-billed elsewhere).
//
// # Admission
//
// Budgets (config.Budget) bound a principal or an account per day, month or
// in total, in tokens and/or USD. Each is an atomic counter in the store,
// keyed like "budget:principal:alice:day:2026-12-02:tokens" or
// "budget:account:acme:month:2026-12:usd_micros", so every replica sharing
// the store enforces the same limit. Reserve adds the call's estimate to
// every applicable counter (all or none); settle replaces the estimate with
// the actual tokens (input, output, cache read and cache write) and cost.
// A primary call's estimate is request bytes/4 (tokens.EstimateSize) plus the
// request's own output cap (or DefaultOutputTokens). Because the estimate
// includes the whole output cap, a call is refused when the remaining budget
// could not cover its worst case; a call that ends up costing more than its
// estimate is still recorded in full, and the overrun refuses later calls.
//
// # Pricing
//
// Costs are integer micro-USD from the price table (USD per million tokens,
// first matching model pattern), with cache reads and writes priced at their
// own rates. Recorded input tokens are uncached input: OpenAI's reported
// input, which includes cached tokens, has the cache reads subtracted.
// A model with no price costs 0 and is counted by
// tether_ledger_unpriced_total.
//
// # Durability
//
// Accounting survives kill -9. Reserve records the call's reservation and
// its counter increments in one store transaction before the call is
// forwarded; settle records the ledger entry, corrects the counters and
// deletes the reservation in another, before it returns (concurrent settles
// share one transaction: group commit). A process that dies mid-call leaves
// its reservation in the store, and Reconcile (at start for a store the
// process owns alone, periodically for expired ones on a shared store)
// releases it and records the call with status 0 and no usage, so every
// forwarded call has a row, no budget stays held by a dead call, and the
// budget counters equal the ledger's sums. A settlement
// the store refuses is kept in memory and retried (the store ignores IDs it
// already has); Close retries what is left.
//
// # Store outages
//
// When the store cannot record a reservation, the Outage policy decides:
// calls no budget applies to are admitted; budget-bound calls are refused
// under fail_closed, and admitted under fail_open (the default) within a
// per-process cap of tokens and micro-USD, their settlements applied to the
// counters when the store is back.
package ledger
