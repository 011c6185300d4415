/**
 * Who a request is and what it may do, as the apiserver's authentication and authorization
 * decide (k8s.io/apiserver's authentication/user and authorization/authorizer). `etcd-effect
 * apiserver` has no authenticator and authorizes everything: every request is the anonymous user
 * (kube-apiserver's `--anonymous-auth` default, with no token, certificate or webhook
 * authenticator configured) and the authorizer is kube-apiserver's `--authorization-mode=AlwaysAllow`.
 * The access reviews (access-review.ts) answer with these, so `kubectl auth can-i` and `kubectl
 * auth whoami` say what the server does.
 */

/** user.Info */
export interface UserInfo {
  readonly username: string
  readonly uid?: string | undefined
  readonly groups: ReadonlyArray<string>
  readonly extra?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
}

/** the anonymous authenticator's user (request/anonymous) */
export const ANONYMOUS: UserInfo = { username: "system:anonymous", groups: ["system:unauthenticated"] }

/** authorizer.Attributes: a resource request or a non-resource one */
export interface AuthorizationAttributes {
  readonly user: UserInfo
  readonly verb: string
  readonly resourceRequest: boolean
  readonly namespace?: string | undefined
  readonly group?: string | undefined
  readonly resource?: string | undefined
  readonly subresource?: string | undefined
  readonly name?: string | undefined
  readonly path?: string | undefined
}

export type Decision = "Allow" | "Deny" | "NoOpinion"

export interface ResourceRule {
  readonly verbs: ReadonlyArray<string>
  readonly apiGroups: ReadonlyArray<string>
  readonly resources: ReadonlyArray<string>
  readonly resourceNames?: ReadonlyArray<string> | undefined
}

export interface NonResourceRule {
  readonly verbs: ReadonlyArray<string>
  readonly nonResourceURLs: ReadonlyArray<string>
}

/** authorizer.Authorizer and authorizer.RuleResolver together */
export interface Authorizer {
  readonly mode: string
  readonly authorize: (attributes: AuthorizationAttributes) => { readonly decision: Decision; readonly reason: string }
  readonly rulesFor: (
    user: UserInfo,
    namespace: string
  ) => {
    readonly resourceRules: ReadonlyArray<ResourceRule>
    readonly nonResourceRules: ReadonlyArray<NonResourceRule>
    readonly incomplete: boolean
  }
}

/** authorizerfactory's alwaysAllowAuthorizer */
export const alwaysAllow: Authorizer = {
  mode: "AlwaysAllow",
  authorize: () => ({ decision: "Allow", reason: "" }),
  rulesFor: () => ({
    resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
    nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
    incomplete: false
  })
}
