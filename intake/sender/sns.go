package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// sns opens Amazon SNS notifications (DESIGN §3): a Notification's
// Message, when it is a JSON object, is read as the payload it carries (a
// CloudWatch alarm, an EventBridge event) by the sender that recognises it;
// a plain-text Message is a text alert titled by its Subject. A
// SubscriptionConfirmation (or UnsubscribeConfirmation) is no alert: it is a
// notice for a person, who confirms the subscription; openrecall never
// fetches the SubscribeURL itself.
func sns() Sender {
	return Sender{
		Name: "sns", Display: "Amazon SNS (envelope)", Episode: false,
		Match: func(v Value) bool {
			t := v.Get("Type").String()
			return (t == "Notification" || t == "SubscriptionConfirmation" || t == "UnsubscribeConfirmation") &&
				v.Has("TopicArn") && v.Has("MessageId")
		},
		Open: func(v Value) (Value, bool) {
			if v.Get("Type").String() != "Notification" {
				return Value{}, false
			}
			msg := strings.TrimSpace(v.Get("Message").String())
			if !strings.HasPrefix(msg, "{") {
				return Value{}, false
			}
			inner, err := Parse([]byte(msg))
			if err != nil || !inner.IsObject() {
				return Value{}, false
			}
			return inner, true
		},
		Map: func(v Value) ([]Event, error) {
			var e Event
			e.SetID("MessageId", "sns-", "", v.Get("MessageId").String())
			e.Timestamp = v.Get("Timestamp").Time()
			e.Label("topic_arn", v.Get("TopicArn").String())
			topic := v.Get("TopicArn").String()
			if i := strings.LastIndexByte(topic, ':'); i >= 0 {
				topic = topic[i+1:]
			}
			switch v.Get("Type").String() {
			case "Notification":
				if !e.Set(PartTitle, v.Get("Subject").String(), "Subject") {
					e.Set(PartTitle, firstLineOf(v.Get("Message").String()), "Message")
				}
				e.Text = v.Get("Message").String()
				e.Set(PartService, topic, "TopicArn")
			default:
				e.Status = openrecall.StatusNotice
				e.Set(PartTitle, "SNS "+v.Get("Type").String()+" for topic "+topic+": confirm it yourself (openrecall never fetches a URL from a payload)", "Type")
				e.Text = Evidence([2]string{"Message", v.Get("Message").String()}, [2]string{"SubscribeURL", v.Get("SubscribeURL").String()})
			}
			return []Event{e}, nil
		},
		Doc: Doc{
			Point: "an HTTPS subscription of the topic to http://HOST:9555/api/v1/alerts?token=TOKEN", Auth: "?token= (SNS sets no header)",
			Title: "the carried payload's sender; a text Message: Subject", Severity: "the carried payload's", Service: "the carried payload's; a text Message: the topic",
			Rule: "the carried payload's", ID: "the carried payload's; a text Message: MessageId", Source: "AWS SNS documentation (HTTP/S notification and subscription confirmation)",
		},
	}
}

// firstLineOf returns the first non-blank line of s.
func firstLineOf(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
