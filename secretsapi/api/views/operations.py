"""POST /sync, /rotation/check, /rotation/execute, /policy/check and /drift/check."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from secretsapi.api.docs import EXAMPLE_SECRET, errors, request_example, response_example
from secretsapi.api.serializers import operations as s
from secretsapi.api.views.base import StrictAPIView
from secretsapi.api.views.jobs import accepted_response, run_as_job

BODY_ERRORS = (400, 401, 404, 413, 415, 422, 500)

VAR_FILES_NOTE = ("Pass the `var_files` the secrets were synced with: the targets' paths depend on the "
                  "variables.")
SYNC_DONE = {"secrets_generated": [EXAMPLE_SECRET], "secrets_skipped": [], "secrets_failed": [],
             "secrets_repaired": [], "errors": [], "message": "Sync complete: 1 secret(s) generated, 0 skipped.",
             "sources": {}, "refreshed": {}, "written": {EXAMPLE_SECRET: ["local/file/out/dev.env"]},
             "written_targets": {}}
SYNC_PARTIAL = {
    "secrets_generated": ["db_replica_password"], "secrets_skipped": [EXAMPLE_SECRET],
    "secrets_failed": ["redis_password"], "secrets_repaired": [],
    "errors": [{"secret": "redis_password", "target": "local/file/out/dev.yaml",
                "message": "out/dev.yaml: cannot be written (Permission denied)"}],
    "message": "Sync incomplete: 1 secret(s) generated, 1 skipped, 1 failed, 1 error(s).",
    "sources": {}, "refreshed": {}, "written": {"db_replica_password": ["local/file/out/dev.env"]},
    "written_targets": {},
}
SYNC_DOC: dict[str, Any] = {
    "summary": "Sync secrets",
    "description": "Generates every secret the lockfile does not record yet (or only `secret_name`) and "
    "writes it to all its targets; existing secrets are skipped unless `force` regenerates them, and "
    "`repair` puts a recorded value back into targets that lost it. `dry_run` reports what would happen "
    "and writes nothing.\n\nA target that fails is reported in `errors` (and the secret in "
    "`secrets_failed` when no target took its value): the answer is still 200, so read the lists. "
    "Fails with 404 when the definition, the named secret or the `environment` is unknown, 422 for an "
    "unknown field or a wrong type, 503 when another operation holds the definition's lock. " + VAR_FILES_NOTE,
    "examples": [
        request_example("Preview one secret", {"secret_name": EXAMPLE_SECRET, "dry_run": True},
                        "Dry run for one secret: nothing is written"),
        request_example("Sync everything", {}, "Generate every secret not generated yet"),
        request_example("Regenerate one secret", {"secret_name": EXAMPLE_SECRET, "force": True},
                        "Force a new value for one secret"),
        request_example("With variable files", {"secret_name": None, "var_files": []},
                        "Every secret; list variable files (relative to the definition) in var_files"),
        response_example("Generated", SYNC_DONE),
        response_example("A target failed", SYNC_PARTIAL),
    ],
}


class SyncView(StrictAPIView):
    @extend_schema(request=s.SyncRequestSerializer,
                   responses={
                       200: OpenApiResponse(s.SyncResultSerializer, description="What was generated, skipped, "
                                            "failed and repaired (in a dry run: what would be)."),
                       202: accepted_response(),
                       **errors(*BODY_ERRORS, 429, 503, 507),
                   },
                   operation_id="sync_secrets", tags=["sync"], **SYNC_DOC)
    def post(self, request: Request) -> Response:
        body = s.SyncRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return run_as_job(request, "sync", body.validated_data)


class RotationCheckView(StrictAPIView):
    @extend_schema(
        request=s.RotationCheckRequestSerializer,
        responses={
            200: OpenApiResponse(s.RotationCheckResultSerializer, description="Each checked secret's rotation status."),
            202: accepted_response(),
            **errors(*BODY_ERRORS, 429, 503),
        },
        operation_id="check_rotation",
        summary="Check which secrets are due for rotation",
        description="For every secret (or only `secret_name`): when it falls due, and whether it is due "
        "soon (within the warning window) or overdue. A secret without a `rotation_period`, or one-time, "
        "is always up to date. Changes nothing (`dry_run` is accepted and ignored). Fails with 404 when "
        "the definition or the named secret does not exist, 422 for an unknown field or a wrong type. "
        + VAR_FILES_NOTE,
        examples=[
            request_example("Every secret", {}, "Check every secret"),
            request_example("One secret", {"secret_name": EXAMPLE_SECRET}, "Check one secret"),
            response_example("One secret up to date", {
                "secrets_checked": 1, "secrets_due": [], "secrets_overdue": [],
                "results": [{"name": EXAMPLE_SECRET, "should_rotate": False, "status": "up to date",
                             "due_at": "2026-02-14T09:30:00+00:00"}],
            }),
            response_example("One secret due soon", {
                "secrets_checked": 1, "secrets_due": [EXAMPLE_SECRET], "secrets_overdue": [],
                "results": [{"name": EXAMPLE_SECRET, "should_rotate": True, "status": "due in 2 days",
                             "due_at": "2026-01-17T09:30:00+00:00"}],
            }),
            response_example("One secret overdue", {
                "secrets_checked": 1, "secrets_due": [], "secrets_overdue": [EXAMPLE_SECRET],
                "results": [{"name": EXAMPLE_SECRET, "should_rotate": True, "status": "overdue by 3 days",
                             "due_at": "2026-01-12T09:30:00+00:00"}],
            }),
        ],
        tags=["rotation"],
    )
    def post(self, request: Request) -> Response:
        body = s.RotationCheckRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return run_as_job(request, "check_rotation", body.validated_data)


class RotationExecuteView(StrictAPIView):
    @extend_schema(
        request=s.RotationExecuteRequestSerializer,
        responses={
            200: OpenApiResponse(s.RotationExecuteResultSerializer, description="What was rotated and what failed."),
            202: accepted_response(),
            **errors(*BODY_ERRORS, 429, 503, 507),
        },
        operation_id="execute_rotation",
        summary="Rotate secrets",
        description="Generates a new value for every secret that is due soon or overdue (or only "
        "`secret_name`; `force` rotates even if not due) and writes it to all its targets. A one-time "
        "secret rotates only when named and forced; a secret not generated yet is not rotated. "
        "A secret whose targets fail is listed in `failed` with its `errors`, in a 200 answer. Fails with "
        "404 when the definition, the named secret or the `environment` is unknown, 422 for an unknown "
        "field or a wrong type, 503 when another operation holds the definition's lock. " + VAR_FILES_NOTE,
        examples=[
            request_example("Rotate what is due", {}, "Rotate every secret that is due"),
            request_example("Rotate one secret now", {"secret_name": EXAMPLE_SECRET, "force": True},
                            "Rotate one secret even if not due"),
            response_example("Rotated", {"rotated": [EXAMPLE_SECRET], "failed": [], "errors": [],
                                         "message": "Rotated 1 secret(s).", "sources": {},
                                         "written": {EXAMPLE_SECRET: ["local/file/out/dev.env"]},
                                         "written_targets": {}}),
        ],
        tags=["rotation"],
    )
    def post(self, request: Request) -> Response:
        body = s.RotationExecuteRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return run_as_job(request, "execute_rotation", body.validated_data)


POLICY_DOC: dict[str, Any] = {
    "request": s.PolicyCheckRequestSerializer,
    "responses": {
        200: OpenApiResponse(s.PolicyResultSerializer, description="Compliance, and every finding by severity."),
        202: accepted_response(),
        **errors(*BODY_ERRORS, 429, 503),
    },
    "description": "Checks every secret against the definition's `policies` and its compliance "
    "frameworks (`metadata.compliance`). Violations are data in the 200 answer (`errors`, `warnings`, "
    "`info`): `compliant` is false when there is any error, or any warning with `fail_on_warning`. Fails "
    "with 404 when the definition or the `environment` does not exist, 422 for an unknown field or a wrong type.",
    "examples": [
        request_example("Errors only", {}, "Only errors make the definition non-compliant"),
        request_example("Strict", {"fail_on_warning": True}, "Warnings count as failures too"),
        response_example("Not compliant", {
            "compliant": False,
            "errors": [{"secret": "api_token", "policy": "soc2",
                        "message": "SOC2: rotation period 1y exceeds 90 days", "severity": "error"}],
            "warnings": [{"secret": "api_token", "policy": "rotation",
                          "message": "rotation_period 1y exceeds max_age 90d", "severity": "warning"}],
            "info": [],
        }),
        response_example("Compliant", {"compliant": True, "errors": [], "warnings": [], "info": []}),
    ],
    "tags": ["checks"],
}


class PolicyCheckView(StrictAPIView):
    @extend_schema(operation_id="check_policies", summary="Check policy compliance", **POLICY_DOC)
    def post(self, request: Request) -> Response:
        body = s.PolicyCheckRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return run_as_job(request, "check_policy", body.validated_data)


class PolicyAliasView(PolicyCheckView):
    @extend_schema(operation_id="check_policies_alias", summary="Check policy compliance (alias)",
                   **{**POLICY_DOC, "description": "The same operation as `POST /policy/check`, under the "
                      "path the spec's overview names.\n\n" + POLICY_DOC["description"]})
    def post(self, request: Request) -> Response:
        return super().post(request)


EXPECTED_HASH = "9fb6dc73dad9cb3f9051c8c80499a28bf2c4af761d085110e54e110c57da0889"
ACTUAL_HASH = "45c9c3207e5fb7d865dd503ff3060fb11d278da2907bf793e7f6e228f3da7727"
DRIFT_DOC: dict[str, Any] = {
    "request": s.DriftCheckRequestSerializer,
    "responses": {
        200: OpenApiResponse(s.DriftResultSerializer, description="Whether anything drifted, and each finding."),
        202: accepted_response(),
        **errors(*BODY_ERRORS, 429, 503),
    },
    "description": "Compares what the lockfile records with what the targets hold (every secret, or only "
    "`secret_name`): a secret never generated, a missing target or file, a changed or unreadable value, a "
    "target the definition no longer has. Drift is data in the 200 answer; only hashes are shown, never "
    "values. Fails with 404 when the definition, the named secret or the `environment` is unknown, 422 "
    "for an unknown field or a wrong type. " + VAR_FILES_NOTE,
    "examples": [
        request_example("Every secret", {}, "Check every secret"),
        request_example("One secret", {"secret_name": EXAMPLE_SECRET}, "Check one secret"),
        response_example("No drift", {"has_drift": False, "secrets_with_drift": [], "details": []}),
        response_example("A changed value", {
            "has_drift": True, "secrets_with_drift": [EXAMPLE_SECRET],
            "details": [{"secret": EXAMPLE_SECRET, "message": "value in target storage differs from the lockfile",
                         "details": {"reason": "value_changed", "target": "local/file/out/dev.env",
                                     "path": "out/dev.env", "key": EXAMPLE_SECRET,
                                     "expected_hash": EXPECTED_HASH, "actual_hash": ACTUAL_HASH}}],
        }),
    ],
    "tags": ["checks"],
}


class DriftCheckView(StrictAPIView):
    @extend_schema(operation_id="check_drift", summary="Check for drift", **DRIFT_DOC)
    def post(self, request: Request) -> Response:
        body = s.DriftCheckRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return run_as_job(request, "check_drift", body.validated_data)


class DriftAliasView(DriftCheckView):
    @extend_schema(operation_id="check_drift_alias", summary="Check for drift (alias)",
                   **{**DRIFT_DOC, "description": "The same operation as `POST /drift/check`, under the "
                      "path the spec's overview names.\n\n" + DRIFT_DOC["description"]})
    def post(self, request: Request) -> Response:
        return super().post(request)


class AgentSyncView(StrictAPIView):
    @extend_schema(
        request=s.AgentSyncRequestSerializer,
        responses={
            200: OpenApiResponse(s.AgentSyncResultSerializer,
                                 description="The sync result, an overall status and one outcome per secret."),
            202: accepted_response(),
            **errors(*BODY_ERRORS, 429, 503, 507),
        },
        operation_id="agent_sync",
        summary="Sync for agents and CI",
        tags=["sync"],
        description="A sync for CI jobs and deploy hooks: the sync result plus an overall `status` "
        "and one outcome per secret. Writes missing and new targets; puts the recorded value over changed "
        "targets unless `repair` is false. Safe to repeat: once "
        "everything exists and every target holds its value it writes nothing. Fails like `POST /sync` "
        "(404, 422, 503); failed targets are data in the 200 answer (`status` `partial` or `failed`).",
        examples=[
            request_example("Sync everything", {}, "Generate what is missing, repair what is broken"),
            request_example("One secret", {"secret_name": EXAMPLE_SECRET}, "Only one secret"),
            response_example("Nothing to do", {
                "secrets_generated": [], "secrets_skipped": [EXAMPLE_SECRET], "secrets_failed": [],
                "secrets_repaired": [], "errors": [], "message": "Sync complete: 0 secret(s) generated, 1 skipped.",
                "sources": {}, "refreshed": {}, "written": {}, "written_targets": {}, "status": "nothing_to_do",
                "outcomes": [{"secret": EXAMPLE_SECRET, "outcome": "skipped", "errors": []}],
            }),
            response_example("Generated", {**SYNC_DONE, "status": "complete",
                                           "outcomes": [{"secret": EXAMPLE_SECRET, "outcome": "generated",
                                                         "errors": []}]}),
        ],
    )
    def post(self, request: Request) -> Response:
        body = s.AgentSyncRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return run_as_job(request, "agent_sync", body.validated_data)
