/**
 * The SMS providers the service knows, by the name SMS_PROVIDER takes. A new provider is one file
 * exporting an SmsProvider (see sms-twilio.ts) and one line here.
 */
import type { SmsProvider } from './sms-port.ts';
import { twilioProvider } from './sms-twilio.ts';

// Settings are each provider's own: the registry only carries them, opaque, from config to sender.
export const SMS_PROVIDERS: Readonly<Record<string, SmsProvider<unknown>>> = {
  twilio: twilioProvider,
};
