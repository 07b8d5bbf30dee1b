package fakereceivers

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// Slack Web API, as Slack documents it (docs.slack.dev, chat.postMessage,
// chat.update, views.open, chat.postEphemeral, "Web API basics"): POST
// /api/{method} with a bot token in
// Authorization: Bearer, the arguments as JSON (or a form); every answer
// HTTP 200 with {"ok": true, …} or {"ok": false, "error": code}:
// not_authed and invalid_auth for the token, channel_not_found,
// no_text (neither text nor blocks), invalid_blocks, message_not_found
// (chat.update of a ts the channel has not), unknown_method. A channel is
// named by its id or its name (with or without "#"); the fake gives each
// name an id (C…) and answers with it, as Slack does, and every message a
// ts unique in its channel.
//
// views.open (https://docs.slack.dev/reference/methods/views.open) takes
// a trigger_id and a view (a JSON-encoded string, or an object in a JSON
// body): the fake records the view and answers {"ok": true, "view": {…,
// "id": "V…"}}; a trigger is good once (exchanged_trigger_id after).
// chat.postEphemeral (https://docs.slack.dev/reference/methods/chat.postEphemeral)
// takes channel, user and text or blocks: the fake records the message and
// answers {"ok": true, "message_ts": …}. Both check the token as
// chat.postMessage does.

const (
	slackBotUser = "U0FAKEBOT01"
	slackBotID   = "B0FAKEBOT01"
	slackTeam    = "T0FAKETEAM1"
)

// slackArgs are chat.postMessage's and chat.update's arguments.
type slackArgs struct {
	Channel string          `json:"channel"`
	TS      string          `json:"ts"`
	Text    string          `json:"text"`
	Blocks  json.RawMessage `json:"blocks"`
}

func (f *Fakes) slackAPI() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /api/{method}", f.route(Slack, true, f.slackCall))
	mux.Handle("/", f.route(Slack, false, func(*http.Request, []byte) answer {
		return answer{status: http.StatusNotFound, body: []byte("404 page not found\n")}
	}))
	return mux
}

// slackRefuse is the API's refusal: HTTP 200, ok false.
func slackRefuse(code string) answer {
	return slackOK(map[string]any{"ok": false, "error": code})
}

// slackOK is an HTTP 200 answer of the Web API.
func slackOK(v map[string]any) answer {
	a := reply(http.StatusOK, v)
	a.header.Set("Content-Type", "application/json; charset=utf-8")
	return a
}

func (f *Fakes) slackCall(r *http.Request, body []byte) answer {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	switch {
	case !strings.EqualFold(scheme, "Bearer") || token == "":
		return slackRefuse("not_authed")
	case f.cfg.SlackToken != "" && token != f.cfg.SlackToken:
		return slackRefuse("invalid_auth")
	}
	method := r.PathValue("method")
	switch method {
	case "chat.postMessage", "chat.update":
	case "views.open":
		return f.slackViewsOpen(r, body)
	case "chat.postEphemeral":
		return f.slackEphemeral(r, body)
	default:
		return slackRefuse("unknown_method")
	}
	args, err := slackArgsOf(r, body)
	if err != nil {
		return slackRefuse("invalid_arguments")
	}
	var blocks []struct {
		Type string `json:"type"`
		Text *struct {
			Text string `json:"text"`
		} `json:"text"`
	}
	if len(args.Blocks) > 0 && string(args.Blocks) != "null" {
		if err := json.Unmarshal(args.Blocks, &blocks); err != nil {
			return slackRefuse("invalid_blocks")
		}
	}
	if args.Text == "" && len(blocks) == 0 {
		return slackRefuse("no_text")
	}
	header := ""
	for _, b := range blocks {
		if b.Type == "header" && b.Text != nil {
			header = b.Text.Text
			break
		}
	}
	if method == "chat.postMessage" {
		return f.slackPost(args, header)
	}
	return f.slackUpdate(args, header)
}

// slackArgsOf reads a call's arguments: JSON, or a form whose blocks are
// JSON text.
func slackArgsOf(r *http.Request, body []byte) (slackArgs, error) {
	var a slackArgs
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		err := json.Unmarshal(body, &a)
		return a, err
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return a, err
	}
	a = slackArgs{Channel: form.Get("channel"), TS: form.Get("ts"), Text: form.Get("text")}
	if b := form.Get("blocks"); b != "" {
		a.Blocks = json.RawMessage(b)
	}
	return a, nil
}

// slackChannel returns the id of the channel named by ref (an id the
// workspace has, or a name), giving a new name an id. The caller holds
// f.mu.
func (f *Fakes) slackChannel(ref string, create bool) (id, name string, ok bool) {
	for n, id := range f.st.Slack.Channels {
		if id == ref {
			return id, n, true
		}
	}
	name = trimHash(ref)
	if id, ok := f.st.Slack.Channels[name]; ok {
		return id, name, true
	}
	if !create || name == "" {
		return "", "", false
	}
	id = fmt.Sprintf("C%010d", len(f.st.Slack.Channels)+1)
	f.st.Slack.Channels[name] = id
	return id, name, true
}

func (f *Fakes) slackPost(args slackArgs, header string) answer {
	id, name, ok := f.slackChannel(args.Channel, true)
	if !ok {
		return slackRefuse("channel_not_found")
	}
	at := f.now()
	ts := fmt.Sprintf("%d.%06d", at.Unix(), f.nextID()%1_000_000)
	v := SlackVersion{Text: args.Text, Header: header, Blocks: args.Blocks, At: at}
	f.st.Slack.Messages = append(f.st.Slack.Messages, SlackMessage{Channel: id, ChannelName: name, TS: ts, Text: args.Text,
		Header: header, Blocks: args.Blocks, PostedAt: at, History: []SlackVersion{v}})
	return slackOK(map[string]any{"ok": true, "channel": id, "ts": ts, "message": slackShown(args, ts)})
}

func (f *Fakes) slackUpdate(args slackArgs, header string) answer {
	id, _, ok := f.slackChannel(args.Channel, false)
	if !ok {
		return slackRefuse("channel_not_found")
	}
	if args.TS == "" {
		return slackRefuse("invalid_arguments")
	}
	for i := range f.st.Slack.Messages {
		m := &f.st.Slack.Messages[i]
		if m.Channel != id || m.TS != args.TS {
			continue
		}
		at := f.now()
		m.Text, m.Header, m.Blocks, m.EditedAt = args.Text, header, args.Blocks, at
		m.History = append(m.History, SlackVersion{Text: args.Text, Header: header, Blocks: args.Blocks, At: at})
		return slackOK(map[string]any{"ok": true, "channel": id, "ts": m.TS, "text": args.Text, "message": slackShown(args, m.TS)})
	}
	return slackRefuse("message_not_found")
}

// slackShown is the message as an answer shows it.
func slackShown(args slackArgs, ts string) map[string]any {
	m := map[string]any{"type": "message", "user": slackBotUser, "bot_id": slackBotID, "text": args.Text, "ts": ts}
	if len(args.Blocks) > 0 {
		m["blocks"] = args.Blocks
	}
	return m
}

// trimHash returns a channel's name without its "#".
func trimHash(name string) string { return strings.TrimPrefix(strings.TrimSpace(name), "#") }

// slackFields reads a call's arguments by name, each as JSON: a JSON
// body's members, or a form's values as JSON strings.
func slackFields(r *http.Request, body []byte) (map[string]json.RawMessage, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	fields := map[string]json.RawMessage{}
	if ct == "application/json" {
		err := json.Unmarshal(body, &fields)
		return fields, err
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	for k := range form {
		b, _ := json.Marshal(form.Get(k))
		fields[k] = b
	}
	return fields, nil
}

// slackString returns the string argument name ("" when it is absent or
// not a string).
func slackString(fields map[string]json.RawMessage, name string) string {
	var s string
	_ = json.Unmarshal(fields[name], &s)
	return s
}

// slackJSON returns the argument name as a JSON value: an object or an
// array as given, or the JSON a string encodes (the Web API takes views
// and blocks as JSON-encoded strings). Nil when absent or not JSON.
func slackJSON(fields map[string]json.RawMessage, name string) json.RawMessage {
	raw := fields[name]
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	if len(raw) == 0 || string(raw) == "null" || !json.Valid(raw) {
		return nil
	}
	return raw
}

// slackViewsOpen opens a modal: it records the view and answers it with
// its id. The caller holds f.mu.
func (f *Fakes) slackViewsOpen(r *http.Request, body []byte) answer {
	fields, err := slackFields(r, body)
	if err != nil {
		return slackRefuse("invalid_arguments")
	}
	trigger, view := slackString(fields, "trigger_id"), slackJSON(fields, "view")
	var v map[string]any
	switch {
	case view == nil || json.Unmarshal(view, &v) != nil:
		return slackRefuse("invalid_arguments")
	case trigger == "":
		return slackRefuse("invalid_trigger_id")
	case v["type"] != "modal":
		return slackRefuse("invalid_arguments")
	}
	for _, seen := range f.st.Slack.Views {
		if seen.TriggerID == trigger {
			return slackRefuse("exchanged_trigger_id")
		}
	}
	callback, _ := v["callback_id"].(string)
	meta, _ := v["private_metadata"].(string)
	sv := SlackView{ID: fmt.Sprintf("V%010d", f.nextID()), TriggerID: trigger, CallbackID: callback, PrivateMetadata: meta,
		View: view, At: f.now()}
	f.st.Slack.Views = append(f.st.Slack.Views, sv)
	v["id"], v["team_id"], v["state"] = sv.ID, slackTeam, map[string]any{"values": map[string]any{}}
	return slackOK(map[string]any{"ok": true, "view": v})
}

// slackEphemeral shows a message to one user of a channel the workspace
// has: it records it and answers its message_ts. The caller holds f.mu.
func (f *Fakes) slackEphemeral(r *http.Request, body []byte) answer {
	fields, err := slackFields(r, body)
	if err != nil {
		return slackRefuse("invalid_arguments")
	}
	text, blocks, user := slackString(fields, "text"), slackJSON(fields, "blocks"), slackString(fields, "user")
	id, _, ok := f.slackChannel(slackString(fields, "channel"), false)
	switch {
	case !ok:
		return slackRefuse("channel_not_found")
	case user == "":
		return slackRefuse("user_not_in_channel")
	case text == "" && blocks == nil:
		return slackRefuse("no_text")
	}
	at := f.now()
	ts := fmt.Sprintf("%d.%06d", at.Unix(), f.nextID()%1_000_000)
	f.st.Slack.Ephemeral = append(f.st.Slack.Ephemeral, SlackEphemeral{Channel: id, User: user, Text: text, Blocks: blocks,
		MessageTS: ts, At: at})
	return slackOK(map[string]any{"ok": true, "message_ts": ts})
}
