-- Argo CD action "resume" for WebhookEndpoint: spec.paused = false.
obj.spec.paused = false
return obj
