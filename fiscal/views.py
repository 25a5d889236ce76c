"""Provider webhooks (inbox) and the document downloads behind the unguessable per-document token."""

from __future__ import annotations

from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from fiscal.models import FiscalDocument
from fiscal.providers import WebhookRejected, get_provider
from fiscal.selectors import RETURN_KIND_PREFIX, correction_file_field, document_file_field, return_note_file_field
from fiscal.services import webhook_store

MAX_BODY = 256 * 1024


@csrf_exempt
@require_POST
def provider_webhook(request: HttpRequest) -> HttpResponse:
    if len(request.body) > MAX_BODY:
        return JsonResponse({"erro": "notificação grande demais"}, status=413)
    provider = get_provider()
    try:
        event = provider.parse_webhook(headers={k.lower(): v for k, v in request.headers.items()}, body=request.body)
    except WebhookRejected as exc:
        return JsonResponse({"erro": str(exc)}, status=401)
    stored = webhook_store(
        provider=provider.name, event_id=event.event_id, provider_ref=event.provider_ref, body=event.body
    )
    return JsonResponse({"recebido": True, "duplicado": stored is None})


@require_GET
def document_file(request: HttpRequest, token: str, kind: str) -> FileResponse:
    document = FiscalDocument.objects.filter(download_token=token, status__in=["authorized", "cancelled"]).first()
    letter = None if document is None else correction_file_field(document, kind)
    if document is not None and letter is not None:  # a carta de correção: its event XML or its PDF
        field, extension = letter
        return FileResponse(
            field.open("rb"), as_attachment=extension == "xml",
            filename=f"nfe-{document.access_key}-{kind.removesuffix('-' + extension)}.{extension}",
            content_type="application/pdf" if extension == "pdf" else "application/xml",
        )  # fmt: skip
    devolution = None if document is None else return_note_file_field(document, kind)
    if devolution is not None:  # an NF-e de devolução that references this sale: its DANFE or its XML
        field, note, file_kind = devolution
        danfe = file_kind == "danfe"
        return FileResponse(
            field.open("rb"), as_attachment=not danfe, filename=f"nfe-{note.access_key}.{'pdf' if danfe else 'xml'}",
            content_type="application/pdf" if danfe else "application/xml",
        )  # fmt: skip
    special = kind.startswith(("cce-", RETURN_KIND_PREFIX))
    field = None if document is None or special else document_file_field(document, kind)
    if document is None or not field:
        raise Http404("documento fiscal não encontrado")
    extension, content_type = ("pdf", "application/pdf") if kind == "danfe" else ("xml", "application/xml")
    name = f"nfe-{document.access_key}-cancelamento" if kind == "cancelamento" else f"nfe-{document.access_key}"
    return FileResponse(
        field.open("rb"), as_attachment=kind != "danfe", filename=f"{name}.{extension}", content_type=content_type
    )
