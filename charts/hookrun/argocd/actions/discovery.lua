-- Argo CD resource actions for hookrun's WebhookEndpoint: which of pause,
-- resume and rotate apply to this endpoint. docs/argocd.md says how to
-- install them. Like the health check, it uses only Lua's base library.
--   pause   the endpoint is not paused by its spec
--   resume  the endpoint is paused by its spec (an endpoint the operator
--           paused for OwnerNotMember is resumed by a member taking it over,
--           not by this action)
--   rotate  the endpoint has a generated secret: not spec.secretRef (rotate
--           that Secret's value instead), not allowUnauthenticated
local spec = obj.spec
if spec == nil then
  spec = {}
end
local paused = spec.paused == true
local generated = spec.secretRef == nil and spec.allowUnauthenticated ~= true
local actions = {}
actions["pause"] = {
  disabled = paused,
  iconClass = "fa fa-fw fa-pause",
  displayName = "Pause (calls answer 422 until resumed)",
}
actions["resume"] = {
  disabled = not paused,
  iconClass = "fa fa-fw fa-play",
  displayName = "Resume",
}
actions["rotate"] = {
  disabled = not generated,
  iconClass = "fa fa-fw fa-key",
  displayName = "Rotate the generated secret",
}
return actions
