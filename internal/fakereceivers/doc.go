// Package fakereceivers plays, on loopback, the API of every destination
// openrecall's notify receivers deliver to, for the end-to-end test of
// `openrecall serve`'s notifications (scripts/fakereceivers runs it as a
// program). Each fake speaks its system's documented API, the one the
// receiver in notify/ was written to:
//
//   - PagerDuty Events API v2: POST /v2/enqueue (trigger, acknowledge,
//     resolve), 202 {status, message, dedup_key}, 400 {status, message,
//     errors} for an invalid event;
//   - Opsgenie Alert API v2 (Authorization: GenieKey): POST /v2/alerts,
//     POST /v2/alerts/{identifier}/close and /notes (identifierType id,
//     tiny or alias), 202 {result, took, requestId}; GET
//     /v2/alerts/requests/{requestId} and GET /v2/alerts/{identifier};
//   - Slack Web API (Authorization: Bearer): POST /api/chat.postMessage and
//     /api/chat.update, HTTP 200 {ok, channel, ts} or {ok: false, error};
//     /api/views.open (a modal for a trigger_id, each good once) and
//     /api/chat.postEphemeral (a message for one user), recorded;
//   - a Microsoft Teams Workflows webhook: POST
//     /workflows/{id}/triggers/manual/paths/invoke?…&sig=…, 202;
//   - openrecall's signed webhook: POST /hook, its HMAC-SHA256 signature
//     verified with the configured secret (docs/webhook.schema.json);
//   - SMTP (RFC 5321) without STARTTLS: EHLO/HELO, MAIL, RCPT, DATA, RSET,
//     NOOP, QUIT, as net/smtp's client speaks it (notify's e-mail receiver
//     with require_tls: false).
//
// The fakes also keep what a person would see in each system (State):
// PagerDuty incidents by dedup_key, triggered, acknowledged or resolved (a
// trigger of a resolved key opens a new incident, as PagerDuty does);
// Opsgenie alerts by alias, open or closed, with their notes; Slack
// messages by channel and ts with every version of each (and their
// buttons, SlackMessage.Buttons), the modals opened, the ephemeral
// messages; Teams cards;
// webhook deliveries; e-mails. Every request is recorded (its credentials
// masked), and a receiver can be told to fail its next requests with a
// status (Fail, or POST /_fail on the Control handler) to play an outage.
//
// The fakes hold no package-level state; a *Fakes is safe for concurrent
// use.
package fakereceivers
