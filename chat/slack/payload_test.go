package slack

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// blockActions is a button's payload, shaped as the example of
// https://docs.slack.dev/reference/interaction-payloads/block_actions-payload.
const blockActions = `{"type":"block_actions","user":{"id":"U0CA5","username":"Amy McGee","name":"Amy McGee","team_id":"T3MDE"},
"api_app_id":"A0CA5","token":"Shh_its_a_seekrit","container":{"type":"message","text":"The contents of the original message where the action originated"},
"trigger_id":"12466734323.1395872398","team":{"id":"T0CAG","domain":"acme-creamery"},"enterprise":null,"is_enterprise_install":false,
"channel":{"id":"C0CA5","name":"oncall"},"message":{"type":"message","ts":"1548261231.000200","text":"..."},
"state":{"values":{}},"response_url":"https://www.postresponsestome.com/T123567/1509734234",
"actions":[{"type":"button","block_id":"openrecall","action_id":"openrecall:decide:real","text":{"type":"plain_text","text":"Real"},"value":"serve-000001","action_ts":"1548426417.840180"}]}`

// viewSubmission is the note modal submitted, shaped as the example of
// https://docs.slack.dev/reference/interaction-payloads/view-interactions-payload.
const viewSubmission = `{"type":"view_submission","team":{"id":"T0CAG","domain":"acme"},"user":{"id":"U0CA5","username":"amy","name":"amy","team_id":"T3MDE"},
"api_app_id":"A0CA5","token":"Shh","trigger_id":"12466734323.1395872398",
"view":{"id":"VNHU13V36","type":"modal","callback_id":"openrecall:note","private_metadata":"serve-000001|C0CA5|1548261231.000200",
"state":{"values":{
 "decision":{"decision":{"type":"static_select","selected_option":{"text":{"type":"plain_text","text":"real"},"value":"real"}}},
 "note":{"note":{"type":"plain_text_input","value":" the disk was the backup "}},
 "dead_end_1":{"dead_end":{"type":"plain_text_input","value":"restarted the agent"}},
 "dead_end_2":{"dead_end":{"type":"plain_text_input","value":null}},
 "dead_end_3":{"dead_end":{"type":"plain_text_input","value":"checked cron"}}}},
"hash":"156663117.cd33ad1f","title":{"type":"plain_text","text":"openrecall decision"}},"response_urls":[]}`

func TestParseBlockActions(t *testing.T) {
	in, err := ParseForm([]byte("payload=" + url.QueryEscape(blockActions)))
	if err != nil {
		t.Fatal(err)
	}
	ch, ts := in.MessageRef()
	if in.Type != TypeBlockActions || in.User.ID != "U0CA5" || in.TriggerID != "12466734323.1395872398" || ch != "C0CA5" || ts != "1548261231.000200" ||
		len(in.Actions) != 1 || in.Actions[0].ActionID != "openrecall:decide:real" || in.Actions[0].Value != "serve-000001" {
		t.Errorf("read: %+v", in)
	}
}

func TestReadSubmission(t *testing.T) {
	in, err := ParseForm([]byte("payload=" + url.QueryEscape(viewSubmission)))
	if err != nil {
		t.Fatal(err)
	}
	want := Submission{Metadata: Metadata{AnalysisID: "serve-000001", Channel: "C0CA5", TS: "1548261231.000200"}, Decision: "real",
		Note: "the disk was the backup", DeadEnds: []string{"restarted the agent", "checked cron"}}
	if diff := cmp.Diff(want, ReadSubmission(in.View)); diff != "" {
		t.Errorf("submission (-want +got):\n%s", diff)
	}
}

func TestParseFormRefusesWhatIsNotAPayload(t *testing.T) {
	for _, body := range []string{"", "payload=", "payload=%7Bnope", "%zz"} {
		if _, err := ParseForm([]byte(body)); err == nil {
			t.Errorf("ParseForm(%q) took it", body)
		}
	}
}

// TestNoteModalRoundTrip: the modal's metadata is what its submission
// reads back.
func TestNoteModalRoundTrip(t *testing.T) {
	m := Metadata{AnalysisID: "serve-000042", Channel: "C1", TS: "1.2"}
	v := NoteModal(m)
	if v.CallbackID != CallbackNote || ParseMetadata(v.PrivateMetadata) != m {
		t.Errorf("modal %+v", v)
	}
	if got := ParseMetadata("serve-1"); got != (Metadata{AnalysisID: "serve-1"}) {
		t.Errorf("an id alone: %+v", got)
	}
}
