"""OAuth 2.1 for /mcp: an Amazon Cognito user pool as the authorization server (context `oauth`).

Hosted MCP clients (claude.ai connectors, Claude Code with `--client-id`) sign a user in with the
authorization code grant and PKCE S256 at the pool's managed login, asking for a token for the
resource `<public URL>/mcp` (RFC 8707). How that maps onto Cognito:

- Resource indicator → audience: Cognito's resource binding puts the `resource` of the
  authorization request into the access token's `aud`. It needs managed login (version 2) and the
  Essentials (or Plus) feature plan, so the pool is on Essentials. The resource is also the
  identifier of the pool's resource server, whose one scope (`<resource>/tools`) the app client
  may request: a token carries it only when it was issued for memlane.
- Client: one public app client (no secret; PKCE instead, as OAuth 2.1 asks of public clients),
  code grant only, with the redirect URIs of the clients in `oauth_callback_urls`. Cognito has no
  dynamic client registration: users give MCP clients this client's id.
- Users: created by an administrator (no self sign-up), with a strong password and TOTP MFA,
  which managed login sets up at the first sign-in.
- Organization: a user belongs to one group `org:<slug>` naming a memlane organization; the
  stack creates `org:default`. The authorizer maps the token's `cognito:groups` to it.

The authorizer validates each token itself (memlane.services.oauth): signature through the
pool's JWKS, issuer, audience, client, expiry.
"""

from __future__ import annotations

from aws_cdk import Aws, Duration, Fn, RemovalPolicy
from aws_cdk import aws_cognito as cognito
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig
from infra.nag import acknowledge
from memlane.domain import oauth as settings

PLUS_TIER_REASON = (
    "The Essentials feature plan already gives what memlane uses (managed login and resource binding "
    "of access tokens to /mcp); Plus adds threat protection at a higher price per user, which an "
    "operator can switch on for a public deployment."
)


class OAuth(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig,
                 resource_url: str) -> None:
        super().__init__(scope, construct_id)
        retain = config.retain_data
        self.user_pool = cognito.UserPool(
            self,
            "UserPool",
            user_pool_name=f"{config.resource_prefix}-users",
            feature_plan=cognito.FeaturePlan.ESSENTIALS,
            self_sign_up_enabled=False,
            sign_in_aliases=cognito.SignInAliases(username=True, email=True),
            auto_verify=cognito.AutoVerifiedAttrs(email=True),
            account_recovery=cognito.AccountRecovery.EMAIL_ONLY,
            mfa=cognito.Mfa.REQUIRED,
            mfa_second_factor=cognito.MfaSecondFactor(otp=True, sms=False),
            password_policy=cognito.PasswordPolicy(
                min_length=c.OAUTH_PASSWORD_MIN_LENGTH, require_lowercase=True, require_uppercase=True,
                require_digits=True, require_symbols=True),
            deletion_protection=retain,
            removal_policy=RemovalPolicy.RETAIN if retain else RemovalPolicy.DESTROY,
        )
        acknowledge(self.user_pool, "AwsSolutions-COG8", PLUS_TIER_REASON)

        self.resource_server = self.user_pool.add_resource_server(
            "McpResource",
            identifier=resource_url,
            user_pool_resource_server_name=f"{config.resource_prefix}-mcp",
            scopes=[cognito.ResourceServerScope(scope_name=settings.SCOPE_NAME,
                                                scope_description="Use memlane's MCP tools")],
        )
        tools_scope = cognito.OAuthScope.resource_server(
            self.resource_server, cognito.ResourceServerScope(scope_name=settings.SCOPE_NAME,
                                                              scope_description="Use memlane's MCP tools"))
        self.client = self.user_pool.add_client(
            "McpClient",
            user_pool_client_name=f"{config.resource_prefix}-mcp-clients",
            generate_secret=False,
            o_auth=cognito.OAuthSettings(
                flows=cognito.OAuthFlows(authorization_code_grant=True),
                scopes=[cognito.OAuthScope.OPENID, cognito.OAuthScope.EMAIL, tools_scope],
                callback_urls=list(config.oauth_callback_urls),
            ),
            supported_identity_providers=[cognito.UserPoolClientIdentityProvider.COGNITO],
            prevent_user_existence_errors=True,
            enable_token_revocation=True,
            access_token_validity=Duration.minutes(c.OAUTH_ACCESS_TOKEN_MINUTES),
            id_token_validity=Duration.minutes(c.OAUTH_ACCESS_TOKEN_MINUTES),
            refresh_token_validity=Duration.days(c.OAUTH_REFRESH_TOKEN_DAYS),
        )
        prefix = config.oauth_domain_prefix or Fn.join("-", [config.resource_prefix, Aws.ACCOUNT_ID])
        self.domain = self.user_pool.add_domain(
            "Domain",
            cognito_domain=cognito.CognitoDomainOptions(domain_prefix=prefix),
            managed_login_version=cognito.ManagedLoginVersion.NEWER_MANAGED_LOGIN,
        )
        # Managed login pages need a style for the client; Cognito's default one.
        cognito.CfnManagedLoginBranding(self, "LoginBranding", user_pool_id=self.user_pool.user_pool_id,
                                        client_id=self.client.user_pool_client_id,
                                        use_cognito_provided_values=True)
        cognito.CfnUserPoolGroup(self, "DefaultOrganization", user_pool_id=self.user_pool.user_pool_id,
                                 group_name=f"{settings.ORG_GROUP_PREFIX}default",
                                 description="Members act for memlane's default organization")

        self.issuer = Fn.join("", ["https://cognito-idp.", Aws.REGION, ".", Aws.URL_SUFFIX, "/",
                                   self.user_pool.user_pool_id])
        self.environment = {
            settings.ENV_ISSUER: self.issuer,
            settings.ENV_CLIENT_IDS: self.client.user_pool_client_id,
            settings.ENV_AUTH_DOMAIN: self.domain.base_url(),
            settings.ENV_RATE_LIMIT: str(config.api_rate_limit_per_minute),
        }
