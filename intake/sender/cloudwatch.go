package sender

import (
	"strings"
	"time"

	"github.com/openrecall/openrecall"
)

// cloudWatch reads AWS CloudWatch alarm state changes in the three forms
// AWS sends them: the alarm JSON an SNS topic carries in its Message (the
// sns adapter opens the envelope, so Match sees the alarm itself), the same
// alarm JSON posted bare, and the EventBridge event "CloudWatch Alarm State
// Change" (source aws.cloudwatch), bare or carried by SNS.
//
// Rule is the AlarmName exactly as sent: it names the check and is the same
// across state changes; the alarm's ARN is kept as a label. An alarm in
// INSUFFICIENT_DATA is another condition than the same alarm breaching its
// threshold (the metric stopped arriving), so its rule is the AlarmName
// followed by " [INSUFFICIENT_DATA]": what analysts decided about the breach
// never vouches for missing data.
//
// Service is the first metric dimension that names a workload: ServiceName
// (ECS), FunctionName (Lambda), DBClusterIdentifier, DBInstanceIdentifier,
// TargetGroup and LoadBalancer (their names, without the "targetgroup/" or
// "app/" prefix and the id suffix), QueueName, TableName, ApiName, CacheClusterId, StateMachineArn,
// TopicName, BucketName, StreamName, DeliveryStreamName, AutoScalingGroupName,
// ClusterName; an alarm tag service (EventBridge alarmTags) comes first.
// InstanceId is never the service: it is the Host. Environment comes from an
// alarm tag env, environment or stage.
//
// CloudWatch has no severity: an alarm is in ALARM or not. Severity is read
// only from an alarm tag severity (or priority) when the alarm carries one,
// mapped by intake's NormalizeSeverity; otherwise it is unknown. Levels is
// empty.
//
// Status: ALARM and INSUFFICIENT_DATA are firing, OK is resolved.
//
// ID: CloudWatch sends no incident id, and the AlarmName names the check, so
// the id is "cw-" + the alarm ARN (or name) + "@" + the time the alarm
// entered the state: two firings are two alerts, a redelivery keeps its id
// (Episode). An EventBridge OK event whose previous state was ALARM carries
// the time ALARM began (previousState.timestamp), so it gets the id of the
// firing it ends; an SNS OK message does not carry that time and gets the id
// of its own transition.
func cloudWatch() Sender {
	return Sender{
		Name: "cloudwatch", Display: "AWS CloudWatch alarms (SNS)", Security: false, Episode: true,
		Match: func(v Value) bool {
			if cloudWatchEvent(v) {
				return true
			}
			return v.Get("AlarmName").IsString() && v.Get("NewStateValue").IsString() &&
				(v.Has("Trigger") || v.Has("AlarmArn") || v.Has("StateChangeTime") || v.Has("AlarmRule"))
		},
		Map: func(v Value) ([]Event, error) {
			v = awsSNSMessage(v)
			if cloudWatchEvent(v) {
				return []Event{cloudWatchBridge(v)}, nil
			}
			return []Event{cloudWatchAlarm(v)}, nil
		},
		Doc: Doc{
			Point: "SNS: an HTTPS subscription of the alarm's topic to http://HOST:9555/api/v1/alerts/cloudwatch?token=TOKEN (confirm it from the notice openrecall shows); EventBridge: an API destination with that URL for the rule \"CloudWatch Alarm State Change\"",
			Auth:  "?token=TOKEN in the subscription URL (SNS sets no header); an EventBridge API destination's connection can send Authorization: Bearer TOKEN",
			Title: "NewStateValue: \"AlarmName\" in Region (as AWS's notification subject)", Severity: "none (CloudWatch has no severity); an alarm tag severity when present",
			Service: "the workload dimension (ServiceName, FunctionName, DBInstanceIdentifier, LoadBalancer, QueueName, …), or an alarm tag service; InstanceId is the host",
			Rule:    "AlarmName (INSUFFICIENT_DATA: AlarmName [INSUFFICIENT_DATA])", ID: "alarm ARN + the time it entered the state (one id per firing)",
			Source: "aws/aws-lambda-go events/testdata CloudWatch alarm SNS payloads (Apache-2.0); AWS CloudWatch user guide EventBridge samples (awsdocs, MIT-0); written for openrecall",
		},
	}
}

// cloudWatchEvent reports whether v is an EventBridge alarm state change.
func cloudWatchEvent(v Value) bool {
	return v.Get("source").String() == "aws.cloudwatch" &&
		v.Get("detail-type").String() == "CloudWatch Alarm State Change" && v.Get("detail").IsObject()
}

// cloudWatchServiceDims are the metric dimensions that name a workload, in
// precedence order.
var cloudWatchServiceDims = []string{"ServiceName", "FunctionName", "DBClusterIdentifier", "DBInstanceIdentifier",
	"TargetGroup", "LoadBalancer", "LoadBalancerName", "QueueName", "TableName", "ApiName", "ApiId", "CacheClusterId",
	"ReplicationGroupId", "StateMachineArn", "TopicName", "BucketName", "StreamName", "DeliveryStreamName",
	"DomainName", "AutoScalingGroupName", "ClusterName"}

// cloudWatchDims is an alarm's metric dimensions, in the order sent.
type cloudWatchDims [][2]string

func (d cloudWatchDims) get(name string) string {
	for _, p := range d {
		if p[0] == name {
			return p[1]
		}
	}
	return ""
}

func (d *cloudWatchDims) add(name, value string) {
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if name == "" || value == "" || d.get(name) != "" {
		return
	}
	*d = append(*d, [2]string{name, value})
}

// cloudWatchService returns the workload a dimension set names, and the
// dimension.
func cloudWatchService(d cloudWatchDims) (string, string) {
	for _, k := range cloudWatchServiceDims {
		s := d.get(k)
		if s == "" {
			continue
		}
		switch k {
		case "LoadBalancer", "TargetGroup":
			// "app/checkout-alb/50dc6c495c0c9188", "targetgroup/web/73e2d6bc24d8a067".
			if parts := strings.Split(s, "/"); len(parts) == 3 {
				s = parts[1]
			}
		case "StateMachineArn":
			if i := strings.LastIndexByte(s, ':'); i >= 0 {
				s = s[i+1:]
			}
		}
		return s, k
	}
	return "", ""
}

// cloudWatchState returns the status of an alarm state.
func cloudWatchState(state string) string {
	switch strings.ToUpper(strings.TrimSpace(state)) {
	case "OK":
		return openrecall.StatusResolved
	}
	return openrecall.StatusFiring
}

// cloudWatchRule is the rule of an alarm in a state.
func cloudWatchRule(name, state string) string {
	if strings.EqualFold(strings.TrimSpace(state), "INSUFFICIENT_DATA") && name != "" {
		return name + " [INSUFFICIENT_DATA]"
	}
	return name
}

// cloudWatchTitle is the title AWS gives an alarm notification:
// `ALARM: "name" in US East (N. Virginia)`.
func cloudWatchTitle(state, name, region string) string {
	t := strings.TrimSpace(state)
	if t == "" {
		t = "Alarm"
	}
	t += ": \"" + name + "\""
	if region = strings.TrimSpace(region); region != "" {
		t += " in " + region
	}
	return t
}

// cloudWatchTags applies an alarm's tags: service, environment, severity
// and the rest as labels.
func cloudWatchTags(e *Event, tags Value, field string) {
	for _, k := range tags.Keys() {
		val := Rendered(tags.Get(k).String())
		if val == "" {
			continue
		}
		switch strings.ToLower(k) {
		case "service", "app", "application":
			if e.Service == "" {
				e.Set(PartService, val, field+"."+k)
			}
		case "env", "environment", "stage":
			e.Set(PartEnvironment, val, field+"."+k)
		case "severity", "priority":
			e.Set(PartSeverity, val, field+"."+k)
		}
		e.Label("tag_"+k, val)
	}
}

// cloudWatchFinish sets the parts a dimension set decides.
func cloudWatchFinish(e *Event, dims cloudWatchDims, field string) {
	if e.Service == "" {
		if s, k := cloudWatchService(dims); s != "" {
			e.Set(PartService, s, field+"."+k)
		}
	}
	e.Host = dims.get("InstanceId")
	for _, d := range dims {
		e.Label("dimension_"+d[0], d[1])
	}
}

// cloudWatchAlarm reads the alarm JSON an SNS notification carries.
func cloudWatchAlarm(v Value) Event {
	var e Event
	name := v.Get("AlarmName").String()
	state := v.Get("NewStateValue").String()
	e.Set(PartRule, cloudWatchRule(name, state), "AlarmName")
	e.Set(PartTitle, cloudWatchTitle(state, name, v.Get("Region").String()), "AlarmName")
	e.Status = cloudWatchState(state)
	e.Timestamp = v.Get("StateChangeTime").Time()
	key, _ := v.First("AlarmArn", "AlarmName")
	e.SetID("AlarmArn+StateChangeTime", "cw-", "@", key, cloudWatchStamp(v.Get("StateChangeTime").String()))
	trig := v.Get("Trigger")
	var dims cloudWatchDims
	addDims := func(list Value) {
		for _, d := range list.Elements() {
			n, _ := d.First("name", "Name")
			val, _ := d.First("value", "Value")
			dims.add(n, val)
		}
	}
	addDims(trig.Get("Dimensions"))
	metric, namespace := trig.Get("MetricName").String(), trig.Get("Namespace").String()
	var metrics []string
	for _, m := range trig.Get("Metrics").Elements() {
		mm := m.Path("MetricStat.Metric")
		addDims(mm.Get("Dimensions"))
		if n := mm.Get("MetricName").String(); n != "" {
			metrics = append(metrics, mm.Get("Namespace").String()+" "+n)
			if metric == "" {
				metric, namespace = n, mm.Get("Namespace").String()
			}
		}
		if x := m.Get("Expression").String(); x != "" {
			metrics = append(metrics, m.Get("Id").String()+" = "+x)
		}
	}
	cloudWatchTags(&e, v.Get("AlarmTags"), "AlarmTags")
	cloudWatchFinish(&e, dims, "Trigger.Dimensions")
	e.Label("alarm_arn", v.Get("AlarmArn").String())
	e.Label("aws_account", v.Get("AWSAccountId").String())
	e.Label("region", v.Get("Region").String())
	e.Label("metric_namespace", namespace)
	e.Label("metric_name", metric)
	e.Label("state", state)
	var dimText []string
	for _, d := range dims {
		dimText = append(dimText, d[0]+"="+d[1])
	}
	e.Text = JoinText(Rendered(v.Get("AlarmDescription").String()), v.Get("NewStateReason").String(), Evidence(
		[2]string{"state", v.Get("OldStateValue").String() + " -> " + state},
		[2]string{"metric", strings.TrimSpace(namespace + " " + metric)},
		[2]string{"metrics", strings.Join(metrics, "; ")},
		[2]string{"dimensions", strings.Join(dimText, ", ")},
		[2]string{"statistic", cloudWatchFirst(trig.Get("Statistic").String(), trig.Get("ExtendedStatistic").String())},
		[2]string{"condition", strings.TrimSpace(trig.Get("ComparisonOperator").String() + " " + trig.Get("Threshold").String())},
		[2]string{"period", trig.Get("Period").String()},
		[2]string{"evaluation periods", trig.Get("EvaluationPeriods").String()},
		[2]string{"alarm rule", v.Get("AlarmRule").String()},
		[2]string{"account", v.Get("AWSAccountId").String()},
		[2]string{"region", v.Get("Region").String()},
	))
	return e
}

// cloudWatchBridge reads an EventBridge "CloudWatch Alarm State Change".
func cloudWatchBridge(v Value) Event {
	var e Event
	d := v.Get("detail")
	name := d.Get("alarmName").String()
	state := d.Path("state.value").String()
	e.Set(PartRule, cloudWatchRule(name, state), "detail.alarmName")
	e.Set(PartTitle, cloudWatchTitle(state, name, v.Get("region").String()), "detail.alarmName")
	e.Status = cloudWatchState(state)
	e.Timestamp = d.Path("state.timestamp").Time()
	if e.Timestamp.IsZero() {
		e.Timestamp = v.Get("time").Time()
	}
	since, sinceField := d.Path("state.timestamp").String(), "detail.state.timestamp"
	if e.Status == openrecall.StatusResolved && strings.EqualFold(d.Path("previousState.value").String(), "ALARM") {
		if p := d.Path("previousState.timestamp").String(); p != "" {
			since, sinceField = p, "detail.previousState.timestamp"
		}
	}
	if since == "" {
		since, sinceField = v.Get("time").String(), "time"
	}
	key := ""
	for _, r := range v.Get("resources").Strings() {
		if strings.Contains(r, ":alarm:") {
			key = r
			break
		}
	}
	keyField := "resources"
	if key == "" {
		key, keyField = name, "detail.alarmName"
	}
	e.SetID(keyField+"+"+sinceField, "cw-", "@", key, cloudWatchStamp(since))
	var dims cloudWatchDims
	var metrics []string
	metric, namespace := "", ""
	for _, m := range d.Path("configuration.metrics").Elements() {
		mm := m.Path("metricStat.metric")
		for _, k := range mm.Get("dimensions").Keys() {
			dims.add(k, mm.Get("dimensions").Get(k).String())
		}
		if n := mm.Get("name").String(); n != "" {
			metrics = append(metrics, strings.TrimSpace(mm.Get("namespace").String()+" "+n+" "+m.Path("metricStat.stat").String()))
			if metric == "" {
				metric, namespace = n, mm.Get("namespace").String()
			}
		}
		if x := m.Get("expression").String(); x != "" {
			metrics = append(metrics, m.Get("id").String()+" = "+x)
		}
	}
	cloudWatchTags(&e, d.Get("alarmTags"), "detail.alarmTags")
	cloudWatchFinish(&e, dims, "detail.configuration.metrics.metricStat.metric.dimensions")
	e.Label("alarm_arn", strings.Join(v.Get("resources").Strings(), " "))
	e.Label("aws_account", v.Get("account").String())
	e.Label("region", v.Get("region").String())
	e.Label("metric_namespace", namespace)
	e.Label("metric_name", metric)
	e.Label("state", state)
	var dimText []string
	for _, x := range dims {
		dimText = append(dimText, x[0]+"="+x[1])
	}
	e.Text = JoinText(Rendered(d.Path("configuration.description").String()), d.Path("state.reason").String(), Evidence(
		[2]string{"state", d.Path("previousState.value").String() + " -> " + state},
		[2]string{"metrics", strings.Join(metrics, "; ")},
		[2]string{"dimensions", strings.Join(dimText, ", ")},
		[2]string{"alarm rule", d.Path("configuration.alarmRule").String()},
		[2]string{"account", v.Get("account").String()},
		[2]string{"region", v.Get("region").String()},
	))
	return e
}

// cloudWatchStamp writes an alarm state time as RFC 3339 in UTC, so that
// "+0000" and "Z" forms of one instant give one id; a time it cannot read
// is kept as sent.
func cloudWatchStamp(s string) string {
	t, err := ParseTime(s)
	if err != nil || t.IsZero() {
		return strings.TrimSpace(s)
	}
	return t.UTC().Format(time.RFC3339Nano)
}

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
// (POST /api/v1/alerts/cloudwatch) opens it here.
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
