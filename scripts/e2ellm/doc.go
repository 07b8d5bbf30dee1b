// Command e2ellm runs openrecall against a real third-party
// OpenAI-compatible server, @dwmkerr/mock-llm (pinned to 0.1.29), and checks
// what a user relies on:
//
//	go run ./scripts/e2ellm -bin ./bin/openrecall
//
// It installs mock-llm from npm into a local git-ignored folder (.e2e-llm)
// unless it is there already, starts it on a free loopback port (HOST is
// always 127.0.0.1) with the rules file beside this program (answers per
// tier and alert keyword, one 429 on the first request), seeds a fresh
// memory from examples/seed.jsonl and runs
//
//	openrecall analyze --provider openai --base-url http://127.0.0.1:PROXY/v1 examples/queue.jsonl
//
// through a recording proxy on another loopback port, so the driver sees
// every prompt openrecall sent. Then it checks: the mode line names the live
// server; the server received exactly as many requests as the results have
// live steps, and bypassed alerts have none; every answered step is billed
// from the usage the rule reported at the vendor's list price (written in
// this driver, not read from the product's price table); the 429 is a
// retried step followed by an answered attempt, and the persisted ledger of
// that analysis (`audit show -o jsonl`) holds one chained entry per step,
// the 429 a live attempt at no cost and the answer billed at list price;
// every attack answer that said false_positive was refused by the guard and
// no attack was closed as benign; the prose answer failed the quality gate;
// savings are honest against baselines recomputed here (a bypass saves the
// strong call it spared: gpt-4o at list price on the analysis prompt at 220
// expected completion tokens, the prompt rebuilt from the result and held
// to the prompts the proxy saw; a passing cheap answer saves the same less
// its cost; a strong or failed answer nothing: its baseline is its billed
// cost; the summary's savings are that sum, and no alert is escalated
// without analysis); the API key appears in no output; audit verify passes.
// It prints a summary and the ledger, and ends mock-llm by its process id.
//
// go test ./scripts/e2ellm runs it on the real binary and on wrong products
// (baselines priced at the completion cap, a price table off the list
// price, a ledger without the rate-limited attempt): each must fail.
package main
