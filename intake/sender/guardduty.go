package sender

// guardDuty is the AWS GuardDuty (EventBridge) adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func guardDuty() Sender {
	return Sender{Name: "guardduty", Display: "AWS GuardDuty (EventBridge)", Security: true}
}
