// What the key may do (GET /v1/whoami): views ask `useCan()("write")` before showing what
// needs a scope, so the dashboard shows only what the key's scopes allow. Without an answer
// (an older server) everything shows, as before.
import { createContext } from "preact";
import { useContext } from "preact/hooks";

export const KeyContext = createContext(null);

export function useKeyInfo() {
  return useContext(KeyContext);
}

export function allows(info, scope) {
  return !info || (info.scopes || []).includes(scope);
}

export function useCan() {
  const info = useContext(KeyContext);
  return (scope) => allows(info, scope);
}
