package sender

// falcosidekick is the Falco (falcosidekick) adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func falcosidekick() Sender {
	return Sender{Name: "falcosidekick", Display: "Falco (falcosidekick)", Security: true}
}
