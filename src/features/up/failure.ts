/**
 * How /up tells a failure, in the command and after a restart alike: a titled error card, and a
 * refusal that says the token may not raise this server (rather than the generic "not allowed").
 */
import { type DescribeFailure, describeError } from '../../interactions/error-message.js';
import { COLORS } from '../../render/colors.js';

export const describeUpFailure: DescribeFailure = (err, t, now) => {
  const generic = describeError(err, t, now, { subject: 'server' });
  const described = generic.code === 'Forbidden' ? { ...generic, text: t('errors.forbidden') } : generic;
  return {
    described,
    message: {
      embeds: [{ color: COLORS.error, title: `❌ ${t('up.title.error')}`, description: described.text }],
      components: [],
    },
  };
};
