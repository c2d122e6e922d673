-- Argo CD action "pause" for WebhookEndpoint: spec.paused = true. The
-- receiver answers calls 422 endpoint_paused; nothing else changes.
obj.spec.paused = true
return obj
