/**
 * Who a request comes from, as the dashboard sees it, and the check that finds out.
 *
 * The check is one function, `(request) => credential | undefined`, injected into the routes: today
 * it knows the one `AUTH_TOKEN`; the tokens file and OAuth give other checks of the same shape.
 */
import { tokensMatch } from "../http/auth.ts";

/** A caller: its name (for logs), the namespaces it may see (`"*"`: all), its own one, its access. */
export interface Credential {
  name: string;
  namespaces: "*" | string[];
  own: string;
  access: "read" | "write";
}

/** Finds the credential a request carries (`Authorization: Bearer …`); undefined when none is valid. */
export type CredentialCheck = (request: Request) => Promise<Credential | undefined>;

/** The bearer token of an `Authorization` header, if it has one. */
export function bearerToken(header: string | null | undefined): string | undefined {
  return header?.match(/^Bearer[ \t]+(\S+)[ \t]*$/i)?.[1];
}

/** The check for `AUTH_TOKEN`: that token (compared in constant time) is `write` access to every namespace. */
export function authTokenCheck(token: string): CredentialCheck {
  const credential: Credential = { name: "AUTH_TOKEN", namespaces: "*", own: "default", access: "write" };
  return async (request) => {
    const presented = bearerToken(request.headers.get("authorization"));
    return presented !== undefined && (await tokensMatch(presented, token)) ? credential : undefined;
  };
}

/** Whether `credential` may see `namespace`. */
export function mayRead(credential: Credential, namespace: string): boolean {
  return credential.namespaces === "*" || credential.namespaces.includes(namespace);
}
