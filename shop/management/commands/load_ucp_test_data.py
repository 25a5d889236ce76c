"""Load the UCP conformance suite's flower shop (products, stock, discount codes) into the catalog (idempotent)."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from shop.demo.ucp_test_data import UcpTestDataError, ucp_test_data_load

# Where CI checks the suite out (docs: /work/notes/ucp-conformance.md §2).
DEFAULT_DIR = Path(settings.BASE_DIR) / "tests" / "ucp_conformance" / "vendor" / "test_data" / "flower_shop"


class Command(BaseCommand):
    help = (
        "Carrega test_data/flower_shop da suíte de conformidade UCP (produtos, estoque, cupons) no catálogo; "
        "rodar de novo restaura preços e estoque dos arquivos."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "data_dir", nargs="?", type=Path, default=DEFAULT_DIR, help=f"Pasta flower_shop (padrão: {DEFAULT_DIR})."
        )

    def handle(self, *args: object, **options: object) -> None:
        data_dir = Path(str(options["data_dir"]))
        try:
            counts = ucp_test_data_load(data_dir=data_dir)
        except UcpTestDataError as exc:
            raise CommandError(str(exc)) from exc
        summary = ", ".join(f"{kind}: {count}" for kind, count in counts.as_dict().items())
        self.stdout.write(
            self.style.SUCCESS(f"Dados de teste UCP carregados de {data_dir} (linhas gravadas — {summary}).")
        )
