package sender

// cloudWatch is the AWS CloudWatch alarms (SNS) adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func cloudWatch() Sender {
	return Sender{Name: "cloudwatch", Display: "AWS CloudWatch alarms (SNS)", Security: false}
}
