"""POST /config/validate."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from secretsapi.api.docs import EXAMPLE_SECRET, NO_STORE, HeaderedResponse, errors, request_example, response_example
from secretsapi.api.errors import BadRequest
from secretsapi.api.serializers import config as c
from secretsapi.api.views.base import StrictAPIView
from secretsapi.api.views.jobs import accepted_response, run_as_job


class ConfigValidateView(StrictAPIView):
    no_store = True

    @extend_schema(
        request=c.ConfigValidateRequestSerializer,
        responses={
            200: HeaderedResponse(c.ValidationResultSerializer, headers=NO_STORE,
                                  description="Whether the definition is valid, with every error and warning."),
            202: accepted_response(),
            **errors(400, 401, 413, 415, 422, 429, 500, 503),
        },
        operation_id="validate_config",
        summary="Validate a definition",
        description="Checks a definition sent as JSON (`config`: the YAML file's content as an object) "
        "without running anything or touching the served definition: its structure, each secret's kind "
        "and options, and each target. An invalid definition is a 200 with `valid: false` and one "
        "sentence per problem in `errors`; `warnings` name what works but deserves a look. A `config` "
        "that is missing or not a JSON object is 400.",
        examples=[
            request_example("A small definition", {"config": {"version": "1.0", "secrets": [{
                "name": EXAMPLE_SECRET, "kind": "random_password", "rotation_period": "30d",
                "config": {"length": 32},
                "targets": [{"provider": "local", "kind": "file",
                             "config": {"path": "out/dev.env", "format": "dotenv"}}],
            }]}}, "One secret written to a dotenv file"),
            response_example("Valid", {"valid": True, "errors": [], "warnings": []}),
            response_example("Valid with a warning", {
                "valid": True, "errors": [], "warnings": [f"secrets[0] '{EXAMPLE_SECRET}': no rotation_period defined"],
            }),
        ],
        tags=["config"],
    )
    def post(self, request: Request) -> Response:
        if not isinstance(request.data, dict):
            raise BadRequest("`config` must be a JSON object holding the definition.")
        body = c.ConfigValidateRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return run_as_job(request, "validate_config", body.validated_data)


class ConfigRenderView(StrictAPIView):
    no_store = True

    @extend_schema(
        request=c.ConfigRenderRequestSerializer,
        responses={
            200: HeaderedResponse(c.ConfigRenderResultSerializer, headers=NO_STORE,
                                  description="The rendered definition and what it used."),
            202: accepted_response(),
            **errors(400, 401, 404, 413, 415, 422, 429, 500, 503),
        },
        operation_id="render_config",
        summary="Render the definition with its variables",
        description="The served definition with `var_files` and `variables` applied, as a sync would see "
        "it: use it to check where targets would land before syncing. Changes nothing. Static secret "
        "values, values from the server's environment and provider credentials are redacted (`***`), "
        "and so is any string equal to a value the lockfile records. A variable file may not be a "
        "target of the definition, the definition itself, a lockfile, a file a provider or a source "
        "reads or a file the service writes (400); one the definition does not declare in "
        "`environments.profiles.<name>.var_files` is 404, as a missing one. Never cached "
        "(`Cache-Control: no-store`). Fails with 404 when the "
        "definition or a variable file does not exist, 422 for an unknown field, a wrong type or an "
        "invalid definition.",
        examples=[
            request_example("Another environment", {"variables": {"env": "staging"}},
                            "Render with env=staging"),
            request_example("As served", {}, "The definition's own variables"),
            response_example("Rendered", {
                "config": {"version": "1.0", "variables": {"env": "staging"}, "secrets": [{
                    "name": EXAMPLE_SECRET, "kind": "random_password", "rotation_period": "30d",
                    "config": {"length": 32},
                    "targets": [{"provider": "local", "kind": "file",
                                 "config": {"path": "out/staging.env", "format": "dotenv"}}],
                }]},
                "variables_used": ["env"], "environment_used": [], "var_files": [],
            }),
        ],
        tags=["config"],
    )
    def post(self, request: Request) -> Response:
        body = c.ConfigRenderRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return run_as_job(request, "render_config", body.validated_data)
