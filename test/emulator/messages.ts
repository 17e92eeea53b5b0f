// Texts of POST /server answers, in the service's Russian markdown.

/** "3 ч. 59 мин. 55 сек." — leading zero units are left out; seconds are rounded up. */
export function formatWaitRu(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const parts: string[] = [];
  if (hours > 0) parts.push(`${hours} ч.`);
  if (hours > 0 || minutes > 0) parts.push(`${minutes} мин.`);
  parts.push(`${seconds} сек.`);
  return parts.join(' ');
}

export function upSuccessMessage(added: number, serverRef: string): string {
  return (
    `:white_check_mark: Серверу было успешно добавлено **${added} UP**!\n\n` +
    `ℹ️Вы также можете оставить отзыв о сервере!\n> https://myservers.me/s/${serverRef}`
  );
}

export function upCooldownMessage(remainingMs: number): string {
  const wait = formatWaitRu(remainingMs);
  return `:x: Сервер пока нельзя поднять! Следующий **UP** будет доступен через **${wait}**`;
}

export const STATS_UPDATED_MESSAGE = ':white_check_mark: Информация о сервере обновлена.';

export const NOT_UPDATED_FAULT_MESSAGE =
  ':x: Не удалось обновить информацию о сервере. Попробуйте ещё раз позже.';
