-- Argo CD health check for hookrun's four kinds (group agents.hookrun.dev:
-- Agent, WebhookEndpoint, AgentThread, AgentRun). docs/argocd.md says how to
-- install it; it reads the conditions as kstatus does (docs/api.md):
--   metadata.deletionTimestamp set  Progressing
--   status.observedGeneration is not metadata.generation (-1 on a new
--     object)  Progressing
--   Reconciling=True (a retried error; a run queued or running)  Progressing
--   Stalled=True (needs a change: a missing Agent or Secret; a run that
--     failed or was skipped)  Degraded
--   Ready=True, reason Paused or AgentArchived (as the spec asks)  Suspended
--   Ready=True  Healthy
--   anything else  Progressing
-- It uses only Lua's base library: Argo CD runs scripts from argocd-cm
-- without the string library.

local function condition(conditionType)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == conditionType then
      return c
    end
  end
  return nil
end

local function isTrue(c)
  return c ~= nil and c.status == "True"
end

local function health(status, c)
  local message = c.reason
  if c.message ~= nil and c.message ~= "" then
    message = c.reason .. ": " .. c.message
  end
  return { status = status, message = message }
end

if obj.metadata.deletionTimestamp ~= nil then
  return { status = "Progressing", message = "Being deleted" }
end
if obj.status == nil or obj.status.observedGeneration ~= obj.metadata.generation then
  return { status = "Progressing", message = "Waiting for the operator to observe generation " .. tostring(obj.metadata.generation) }
end
local reconciling = condition("Reconciling")
if isTrue(reconciling) then
  return health("Progressing", reconciling)
end
local stalled = condition("Stalled")
if isTrue(stalled) then
  return health("Degraded", stalled)
end
local ready = condition("Ready")
if ready == nil then
  return { status = "Progressing", message = "Waiting for the operator" }
end
if not isTrue(ready) then
  return health("Progressing", ready)
end
if ready.reason == "Paused" or ready.reason == "AgentArchived" then
  return health("Suspended", ready)
end
return health("Healthy", ready)
