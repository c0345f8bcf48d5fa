/**
 * The built-in texts of the auth mails in English, German, French and Spanish, written in the
 * template language of render.ts (`{{ var }}` escaped in html). A project may replace any of
 * them per locale (auth_mail_templates); the variables each kind receives are listed in
 * AUTH_MAIL_VARIABLES (docs/mail.md).
 */
export const AUTH_MAIL_KINDS = ['verification', 'reset', 'magic_link', 'email_code'] as const;
export type AuthMailKind = (typeof AUTH_MAIL_KINDS)[number];

export const BUILTIN_LOCALES = ['en', 'de', 'fr', 'es'] as const;
export type BuiltinLocale = (typeof BUILTIN_LOCALES)[number];

/** The variables a template of each kind may use, with the sample values of a preview. */
export const AUTH_MAIL_VARIABLES: ReadonlyMap<AuthMailKind, Record<string, string>> = new Map<AuthMailKind, Record<string, string>>([
  ['verification', { code: '123456', projectName: 'Acme', email: 'ada@example.com', expiresInMinutes: '10' }],
  ['reset', { code: '123456', projectName: 'Acme', email: 'ada@example.com', expiresInMinutes: '10' }],
  ['magic_link', { linkUrl: 'https://app.example.com/auth/magic?token=sample', code: '123456', projectName: 'Acme', email: 'ada@example.com', expiresInMinutes: '15' }],
  ['email_code', { code: '123456', projectName: 'Acme', email: 'ada@example.com', expiresInMinutes: '10' }],
]);

export interface AuthMailText {
  subject: string;
  html: string;
  text: string;
}

const codeMail = (subject: string, intro: string, expires: string, ignore: string): AuthMailText => ({
  subject,
  text: `${intro} {{ code }}\n\n${expires}\n${ignore}`,
  html: `<p>${intro} <strong style="font-size:20px;letter-spacing:2px">{{ code }}</strong></p><p>${expires}</p><p style="color:#666">${ignore}</p>`,
});

/** A link mail also carries the same request's code (`orCode`), for a reader on another device. */
const linkMail = (subject: string, intro: string, button: string, orCode: string, expires: string, ignore: string): AuthMailText => ({
  subject,
  text: `${intro}\n\n{{ linkUrl }}\n\n${orCode} {{ code }}\n\n${expires}\n${ignore}`,
  html: `<p>${intro}</p><p><a href="{{ linkUrl }}" style="display:inline-block;padding:10px 16px;background:#111;color:#fff;border-radius:6px;text-decoration:none">${button}</a></p><p>${orCode} <strong>{{ code }}</strong></p><p>${expires}</p><p style="color:#666">${ignore}</p>`,
});

const TEXTS = new Map<BuiltinLocale, Map<AuthMailKind, AuthMailText>>([
  ['en', new Map<AuthMailKind, AuthMailText>([
    ['verification', codeMail('Verify your email for {{ projectName }}', 'Your code to verify your email is', 'It expires in {{ expiresInMinutes }} minutes.', 'If you did not ask for it, ignore this email.')],
    ['reset', codeMail('Reset your {{ projectName }} password', 'Your code to reset your password is', 'It expires in {{ expiresInMinutes }} minutes.', 'If you did not ask for it, ignore this email: your password stays as it is.')],
    ['magic_link', linkMail('Your sign-in link for {{ projectName }}', 'Use this link to sign in to {{ projectName }}. It works once.', 'Sign in', 'Or enter this code:', 'It expires in {{ expiresInMinutes }} minutes.', 'If you did not ask for it, ignore this email.')],
    ['email_code', codeMail('Your sign-in code for {{ projectName }}', 'Your code to sign in is', 'It expires in {{ expiresInMinutes }} minutes and works once.', 'If you did not ask for it, ignore this email.')],
  ])],
  ['de', new Map<AuthMailKind, AuthMailText>([
    ['verification', codeMail('Bestätige deine E-Mail-Adresse für {{ projectName }}', 'Dein Code zur Bestätigung deiner E-Mail-Adresse lautet', 'Er läuft in {{ expiresInMinutes }} Minuten ab.', 'Wenn du ihn nicht angefordert hast, ignoriere diese E-Mail.')],
    ['reset', codeMail('Setze dein Passwort für {{ projectName }} zurück', 'Dein Code zum Zurücksetzen deines Passworts lautet', 'Er läuft in {{ expiresInMinutes }} Minuten ab.', 'Wenn du ihn nicht angefordert hast, ignoriere diese E-Mail: dein Passwort bleibt unverändert.')],
    ['magic_link', linkMail('Dein Anmeldelink für {{ projectName }}', 'Mit diesem Link meldest du dich bei {{ projectName }} an. Er funktioniert einmal.', 'Anmelden', 'Oder gib diesen Code ein:', 'Er läuft in {{ expiresInMinutes }} Minuten ab.', 'Wenn du ihn nicht angefordert hast, ignoriere diese E-Mail.')],
    ['email_code', codeMail('Dein Anmeldecode für {{ projectName }}', 'Dein Code zur Anmeldung lautet', 'Er läuft in {{ expiresInMinutes }} Minuten ab und funktioniert einmal.', 'Wenn du ihn nicht angefordert hast, ignoriere diese E-Mail.')],
  ])],
  ['fr', new Map<AuthMailKind, AuthMailText>([
    ['verification', codeMail('Vérifiez votre adresse e-mail pour {{ projectName }}', 'Votre code de vérification est', 'Il expire dans {{ expiresInMinutes }} minutes.', "Si vous ne l'avez pas demandé, ignorez cet e-mail.")],
    ['reset', codeMail('Réinitialisez votre mot de passe {{ projectName }}', 'Votre code de réinitialisation du mot de passe est', 'Il expire dans {{ expiresInMinutes }} minutes.', "Si vous ne l'avez pas demandé, ignorez cet e-mail : votre mot de passe reste inchangé.")],
    ['magic_link', linkMail('Votre lien de connexion à {{ projectName }}', 'Utilisez ce lien pour vous connecter à {{ projectName }}. Il ne fonctionne qu’une fois.', 'Se connecter', 'Ou saisissez ce code :', 'Il expire dans {{ expiresInMinutes }} minutes.', "Si vous ne l'avez pas demandé, ignorez cet e-mail.")],
    ['email_code', codeMail('Votre code de connexion à {{ projectName }}', 'Votre code de connexion est', 'Il expire dans {{ expiresInMinutes }} minutes et ne fonctionne qu’une fois.', "Si vous ne l'avez pas demandé, ignorez cet e-mail.")],
  ])],
  ['es', new Map<AuthMailKind, AuthMailText>([
    ['verification', codeMail('Verifica tu correo para {{ projectName }}', 'Tu código para verificar tu correo es', 'Caduca en {{ expiresInMinutes }} minutos.', 'Si no lo has solicitado, ignora este correo.')],
    ['reset', codeMail('Restablece tu contraseña de {{ projectName }}', 'Tu código para restablecer tu contraseña es', 'Caduca en {{ expiresInMinutes }} minutos.', 'Si no lo has solicitado, ignora este correo: tu contraseña no cambia.')],
    ['magic_link', linkMail('Tu enlace de acceso a {{ projectName }}', 'Usa este enlace para iniciar sesión en {{ projectName }}. Funciona una sola vez.', 'Iniciar sesión', 'O introduce este código:', 'Caduca en {{ expiresInMinutes }} minutos.', 'Si no lo has solicitado, ignora este correo.')],
    ['email_code', codeMail('Tu código de acceso a {{ projectName }}', 'Tu código para iniciar sesión es', 'Caduca en {{ expiresInMinutes }} minutos y funciona una sola vez.', 'Si no lo has solicitado, ignora este correo.')],
  ])],
]);

export const isBuiltinLocale = (l: string): l is BuiltinLocale => (BUILTIN_LOCALES as readonly string[]).includes(l);
export const isAuthMailKind = (k: string): k is AuthMailKind => (AUTH_MAIL_KINDS as readonly string[]).includes(k);

export function builtinText(locale: BuiltinLocale, kind: AuthMailKind): AuthMailText {
  return TEXTS.get(locale)!.get(kind)!;
}
