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
//	openrecall analyze --provider openai --base-url http://127.0.0.1:PORT/v1 examples/queue.jsonl
//
// Then it checks: the mode line names the live server; the server received
// exactly as many requests as the results have live steps, and bypassed
// alerts have none; every answered step is billed from the usage the rule
// reported (recomputed from the price table); the 429 is a retried step in
// the persisted audit ledger followed by an answered attempt; every attack
// answer that said false_positive was refused by the guard and no attack
// was closed as benign; the prose answer failed the quality gate; savings
// are honest (a bypass saves its baseline, a passing cheap answer the
// difference, a strong or failed answer nothing: its baseline is its billed
// cost; the summary's savings are that sum, and no alert is escalated
// without analysis); the API
// key appears in no output; audit verify passes. It prints a summary and a
// ledger excerpt, and ends mock-llm by its process id.
package main
