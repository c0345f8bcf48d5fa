/**
 * The browser half of the console's passkeys: the server's options (JSON) go through the
 * browser's own parsers to navigator.credentials, and the credential goes back as JSON
 * (PublicKeyCredential.toJSON()). No library: every browser the console supports has these.
 */
export const passkeysSupported = (): boolean =>
  typeof PublicKeyCredential !== 'undefined' && typeof PublicKeyCredential.parseCreationOptionsFromJSON === 'function';

export async function createPasskey(options: unknown): Promise<unknown> {
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(options as PublicKeyCredentialCreationOptionsJSON);
  const credential = (await navigator.credentials.create({ publicKey })) as PublicKeyCredential | null;
  if (!credential) throw new Error('No passkey was created.');
  return credential.toJSON();
}

export async function getPasskey(options: unknown): Promise<unknown> {
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options as PublicKeyCredentialRequestOptionsJSON);
  const credential = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential | null;
  if (!credential) throw new Error('No passkey was chosen.');
  return credential.toJSON();
}
