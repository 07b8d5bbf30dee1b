// Package slack is the Slack side of deciding from chat (DESIGN §12c):
// it verifies Slack's signed interaction requests before anything of them
// is read, refuses a request it has seen before, reads block_actions and
// view_submission payloads, builds the note modal, and calls the three Web
// API methods the interaction endpoint uses (views.open, chat.update,
// chat.postEphemeral). It decides nothing: server/ maps the Slack user to
// an analyst and runs the use cases the cockpit runs.
//
// Written to Slack's documentation:
// https://docs.slack.dev/authentication/verifying-requests-from-slack,
// https://docs.slack.dev/reference/interaction-payloads/block_actions-payload,
// https://docs.slack.dev/reference/interaction-payloads/view-interactions-payload,
// https://docs.slack.dev/surfaces/modals,
// https://docs.slack.dev/reference/methods/views.open,
// https://docs.slack.dev/reference/methods/chat.update and
// https://docs.slack.dev/reference/methods/chat.postEphemeral.
package slack
