package sender

import "strings"

// Helpers of the AWS adapters still written in Go (guardduty, securityhub,
// panther), kept when the cloudwatch adapter became a mapping.

// cloudWatchFirst returns the first non-blank string.
func cloudWatchFirst(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// awsSNSMessage returns the JSON object an SNS Notification carries in its
// Message, or v itself when v is no such envelope. Detection opens SNS
// envelopes itself (the sns adapter); a sender forced on an SNS body
// (POST /api/v1/alerts/guardduty) opens it here.
func awsSNSMessage(v Value) Value {
	if v.Get("Type").String() != "Notification" || !v.Has("TopicArn") {
		return v
	}
	msg := strings.TrimSpace(v.Get("Message").String())
	if !strings.HasPrefix(msg, "{") {
		return v
	}
	inner, err := Parse([]byte(msg))
	if err != nil || !inner.IsObject() {
		return v
	}
	return inner
}
