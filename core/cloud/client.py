"""boto3 clients with adaptive retries, and boto errors turned into one actionable sentence."""

from __future__ import annotations

from typing import Any

GPU_FAMILIES = ("p2", "p3", "p3dn", "p4d", "p4de", "p5", "p5e", "g3", "g4dn", "g4ad", "g5", "g5g",
                "g6", "g6e", "gr6", "trn1", "inf2")
TAG_SESSION = "probecast:session"
TAG_OWNER = "probecast:owner"


class AwsError(Exception):
    """A failure phrased for the user: what happened and what to do."""


def retry_config() -> Any:
    from botocore.config import Config as BotoConfig

    # throttling and transient errors: exponential backoff with jitter, adaptive client rate
    return BotoConfig(retries={"max_attempts": 8, "mode": "adaptive"}, connect_timeout=10,
                      read_timeout=30)


def client(service: str, region: str | None = None, endpoint_url: str | None = None) -> Any:
    import boto3

    kwargs: dict[str, Any] = {"config": retry_config()}
    if region:
        kwargs["region_name"] = region
    if endpoint_url:
        kwargs["endpoint_url"] = endpoint_url
    # A fresh session each time: the credential chain is read now, not cached from earlier.
    return boto3.session.Session().client(service, **kwargs)


def explain(exc: BaseException, action: str) -> AwsError:
    """Turn boto errors into one actionable sentence."""
    from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError

    if isinstance(exc, NoCredentialsError):
        return AwsError("no AWS credentials: set AWS_PROFILE (aws configure / aws sso login) or "
                        "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY; without them probecast uses its "
                        "embedded price catalog")
    if isinstance(exc, EndpointConnectionError):
        return AwsError(f"cannot reach AWS for {action}: {exc}")
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        msg = exc.response.get("Error", {}).get("Message", "")
        if code in ("UnauthorizedOperation", "AccessDenied", "AccessDeniedException"):
            return AwsError(f"not allowed to call {action}: grant the IAM action {action} "
                            f"to this identity ({msg})")
        if code in ("Throttling", "ThrottlingException", "RequestLimitExceeded"):
            return AwsError(f"AWS throttled {action} even after retries; try again in a minute")
        if code in ("InsufficientInstanceCapacity", "InstanceLimitExceeded", "Unsupported"):
            return AwsError(f"{action}: {code}: {msg}")
        return AwsError(f"{action} failed: {code}: {msg}")
    return AwsError(f"{action} failed: {type(exc).__name__}: {exc}")
