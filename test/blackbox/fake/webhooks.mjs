// Post-call webhook delivery: one POST to the assistant's webhook_url when a call ends
// (nothing when the webhook is off; only successes with send_webhook_only_on_completed),
// no signature, no retry, as the live service is reported to do. The receiver's answer is kept on the
// call as webhook_response. URLs are never logged or served: they carry the secret.
import { webhookPayload } from './calls.mjs';

const SUCCESS = new Set(['completed', 'ended', 'ended_by_customer', 'ended_by_assistant']);

/** A sender bound to the assistants, the server zone and the stats. */
export function createWebhookSender({ assistants, zone, stats }) {
  return async function deliver(call) {
    const a = assistants.byId(call.assistant_id);
    if (!a || !a.is_webhook_active || !a.webhook_url) return;
    if (a.send_webhook_only_on_completed && !SUCCESS.has(call.status)) return;
    stats.webhooks.sent++;
    try {
      const res = await fetch(a.webhook_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'fake-voice-service/1' },
        body: JSON.stringify(webhookPayload(call, zone)),
        signal: AbortSignal.timeout(5000),
      });
      const text = await res.text();
      let parsed = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // the receiver's text is kept as it is
      }
      call.webhook = { status: res.status, body: parsed };
      if (res.ok) stats.webhooks.ok++;
      else stats.webhooks.refused++;
    } catch (err) {
      call.webhook = { error: err instanceof Error ? err.name : 'delivery failed' };
      stats.webhooks.failed++;
    }
  };
}
