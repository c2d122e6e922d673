-- Argo CD action "rotate" for WebhookEndpoint: sets the rotate-secret
-- annotation to the time now (UTC, to the second). The operator rotates the
-- generated secret once per new value (docs/api.md); two rotations asked for
-- within one second are one. os is the subset of Lua's os library Argo CD
-- gives actions (time and date).
if obj.metadata.annotations == nil then
  obj.metadata.annotations = {}
end
obj.metadata.annotations["agents.hookrun.dev/rotate-secret"] = os.date("!%Y-%m-%dT%H:%M:%SZ")
return obj
