"""`memlane keys`: create, list and revoke the data directory's API keys (every organization's:
whoever can run this command owns the data directory)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from memlane.cli.common import (
    WEB_APP_HINT,
    NoEmbedder,
    data_dir_option,
    err,
    existing_data_dir,
    local_runtime,
    no_data_dir,
    works_on_data_directory,
)
from memlane.domain.limits import DEFAULT_RATE_LIMIT_PER_MINUTE


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= number <= 100_000:
        raise argparse.ArgumentTypeError("must be between 1 and 100000")
    return number


def add_parsers(sub: argparse._SubParsersAction) -> None:
    k = sub.add_parser("keys", help="manage API keys")
    ks = k.add_subparsers(dest="keys_cmd", required=True)
    kc = ks.add_parser("create", help="create a key (and the organization when new)")
    kc.add_argument("--org", default="default", help="organization (slug) of the key, created when new "
                                                       "(default: default)")
    kc.add_argument("--name", default="default", help="a name to recognise the key by in `memlane keys list` "
                                                       "and to revoke it by (default: default)")
    kc.add_argument("--manage-keys", action="store_true",
                    help="the key may list, create and revoke its organization's keys (web app settings)")
    kc.add_argument("--rate-limit", dest="rate_limit", type=positive_int, default=DEFAULT_RATE_LIMIT_PER_MINUTE,
                    help="requests per minute for this key "
                         f"(a bulk save counts each item; default {DEFAULT_RATE_LIMIT_PER_MINUTE})")
    kl = ks.add_parser("list", help="list keys")
    kr = ks.add_parser("revoke", help="revoke a key by its name, its id, its prefix, or a unique start of its id "
                                      "or prefix")
    kr.add_argument("key", metavar="KEY", help="the key's name, id or prefix, as `memlane keys list` shows them")
    data_dir_option(k, kc, kl, kr)
    k.set_defaults(func=cmd_keys)


def key_to_revoke(keys: list, wanted: str) -> str:
    """The id of the one active key whose id or prefix is `wanted`, else whose name is `wanted`,
    else whose id or prefix starts with it. Raises NotFoundError (none) or InvalidInputError
    (several, listed)."""
    from memlane.domain.errors import InvalidInputError, NotFoundError

    wanted = wanted.strip().removesuffix("…")
    active = [k for k in keys if not k.revoked_at]
    matches = ([k for k in active if wanted in (k.id, k.prefix)]
               or [k for k in active if k.name == wanted]
               or [k for k in active if wanted and (k.id.startswith(wanted) or k.prefix.startswith(wanted))])
    if not matches:
        raise NotFoundError(f"no active key {wanted!r} (see `memlane keys list`)")
    if len(matches) > 1:
        listed = ", ".join(f"{k.id} ({k.prefix}…, {k.name})" for k in matches)
        raise InvalidInputError("key", f"{wanted!r} matches {len(matches)} active keys: {listed}; give its id")
    return str(matches[0].id)


@works_on_data_directory("keys", WEB_APP_HINT)
def cmd_keys(args: argparse.Namespace) -> int:
    from memlane.domain.errors import MemlaneError
    from memlane.services.keys import create_key, revoke_key

    if args.keys_cmd != "create" and existing_data_dir(args) is None:
        return no_data_dir(args)
    runtime = local_runtime(args, embedder=NoEmbedder())
    md = runtime.stack.metadata
    try:
        if args.keys_cmd == "create":
            secret, key, org = create_key(md, args.org, args.name, args.rate_limit,
                                          can_manage_keys=args.manage_keys)
            print(f"created key {key.id} ({key.prefix}…) for organization {org.name} ({org.id})")
            print("store it now: it is shown once")
            print(secret)
        elif args.keys_cmd == "list":
            orgs = {o.id: o.name for o in md.list_organizations()}
            keys = md.list_api_keys()
            if not keys:
                print("no keys (create one with `memlane keys create`)")
            for k in keys:
                state = f"revoked {k.revoked_at:%Y-%m-%d}" if k.revoked_at else "active"
                print(
                    f"{k.id}  {k.prefix}…  org={orgs.get(k.organization_id, k.organization_id)}  "
                    f"name={k.name}  rate={k.rate_limit_per_minute}/min  {state}"
                    f"{'  manages keys' if k.can_manage_keys else ''}"
                )
        elif args.keys_cmd == "revoke":
            key_id = key_to_revoke(md.list_api_keys(), args.key)
            revoke_key(md, key_id, datetime.now(UTC))
            print(f"revoked {key_id}")
    except MemlaneError as exc:  # CLI boundary: report, don't trace
        return err(exc.message)
    finally:
        runtime.close()
    return 0
