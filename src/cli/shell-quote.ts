/** POSIX shell quoting of one word, so `cordon run -- echo 'a b'` runs exactly `echo 'a b'`. */
export function shellQuote(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_/.,:=@%+^-]+$/.test(word)) return word
  return `'${word.replace(/'/g, `'\\''`)}'`
}
