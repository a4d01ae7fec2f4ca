"""Setup: pick instances (hosts), batch sizes and probe settings, then start."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Label, Select, SelectionList, Static

from probecast.core.agent.policy import DEFAULT_MAX_STEPS
from probecast.core.agent.workloads import WORKLOADS
from probecast.core.model.pricing import InstanceType, newest_first
from probecast.core.model.estimate.length import DEFAULT_EPOCHS
from probecast.core.run.command_line import PLACEHOLDER
from probecast.core.run.config import Config, Host, ProbeSettings
from probecast.core.report.fmt import fmt_cost
from probecast.core.run.job import LaunchProvider, describe_length, settings_for
from probecast.core.run.probe_plan import plan_probes, session_dir, worst_case_probe_cost
from probecast.core.run.runners import workload_label
from probecast.core.run.session import Session

from ..actions import bindings
from ..debounce import Debounce
from .setup_memory import SetupMemory
from .setup_start import StartFromSetup

if TYPE_CHECKING:
    from probecast.core.cloud.aws_launch import AwsProvider
    from probecast.core.cloud.sky_launch import SkyProvider

PRESET_BATCHES = (16, 32, 64, 128, 256, 512, 1024, 2048)
SUMMARY_DEBOUNCE = 0.25  # s of quiet after a keystroke before the summary's plan is rebuilt
ADD_HOST_HINT = ('no host for {name}: add [[hosts]] with instance = "{name}" and its address '
                 "to probecast.toml, or an [aws] section to launch it from here "
                 "(docs/config.md, docs/providers.md)")


class SetupScreen(StartFromSetup, Screen[None]):
    BINDINGS = bindings("setup")

    def __init__(self, session: Session, providers: list[LaunchProvider] | None = None) -> None:
        super().__init__()
        self.session = session
        by_kind = {p.kind: p for p in providers or []}
        # [aws]: picked types without a host are launched; [skypilot]: its picked candidates
        self.provider: AwsProvider | None = by_kind.get("aws")  # type: ignore[assignment]
        self.sky: SkyProvider | None = by_kind.get("skypilot")  # type: ignore[assignment]
        self.selected_hosts: set[str] = set()
        self.selected_launch: list[str] = []  # instance types to launch, in the order picked
        self.selected_sky: list[str] = []  # SkyPilot candidates to launch, in the order picked
        self.find_batch = False  # f: search each picked host for its largest batch size
        # c: probe only the contenders, predict the rest (core/run/contenders.py)
        self.contenders = bool(session.config and session.config.probe.contenders)
        self.memory = SetupMemory(session, session.board.pricing.catalog)
        self.summary_due = Debounce(self, SUMMARY_DEBOUNCE, lambda: self.update_summary())

    @property
    def config(self) -> Config:
        assert self.session.config is not None
        return self.session.config

    def compose(self) -> ComposeResult:
        s = self.config.probe
        yield Header()
        with Vertical(id="instances-box"):
            yield Input(placeholder="/ to filter instances (g5, A100, 24G …)", id="filter", compact=True)
            yield DataTable(id="instances", cursor_type="row", zebra_stripes=True)
        with Horizontal(id="settings"):
            with Vertical(id="batch-box"):
                # a command that takes no {batch_size} runs at the program's own: nothing to pick
                own = self.own_batch
                yield SelectionList[int](
                    *[(str(b), b, b in s.batch_sizes) for b in
                      sorted(set(PRESET_BATCHES) | set(s.batch_sizes))], id="batches",
                    disabled=own)
                yield Input(placeholder="+ custom: 96 192", id="custom-batches", compact=True,
                            disabled=own)
                if own:
                    yield Static(f"the command has no {PLACEHOLDER}: the program's own batch "
                                 "size", id="own-batch", classes="hint")
            with Vertical(id="probe-box"):
                with Horizontal(classes="field"):
                    yield Label("workload")
                    if s.command:
                        yield Label(s.command, id="command")
                    else:
                        yield Select([(w, w) for w in WORKLOADS], value=s.workload,
                                     allow_blank=False, id="workload", compact=True)
                with Horizontal(classes="field"):
                    yield Label("max steps")
                    yield Input(str(s.max_steps or ""), placeholder=str(DEFAULT_MAX_STEPS),
                                id="max-steps",
                                restrict=r"[0-9]*", compact=True)
                with Horizontal(classes="field"):
                    yield Label("or CI ≤")
                    yield Input("" if s.target_ci is None else str(s.target_ci),
                                placeholder="0.02 = stop when ±2 %", id="target-ci",
                                restrict=r"[0-9.]*", compact=True)
                with Horizontal(classes="field"):
                    yield Label("epochs")
                    yield Input("" if s.epochs is None else str(s.epochs),
                                placeholder=f"blank: the program's, else {DEFAULT_EPOCHS}",
                                id="epochs", restrict=r"[0-9]*", compact=True)
                with Horizontal(classes="field"):
                    yield Label("steps")
                    yield Input("" if s.steps is None else str(s.steps),
                                placeholder="blank: what the program says", id="job-steps",
                                restrict=r"[0-9]*", compact=True)
                yield Static("batch sizes run in turn on a host; logs are saved",
                             classes="hint")
        yield Static(id="summary")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#instances-box").border_title = "Instances: space picks, / filters"
        box = self.query_one("#batch-box")
        box.border_title = "Batch size" if self.own_batch else "Batch sizes"
        if self.own_batch:  # nothing to pick: only the line that says why
            self.query_one("#batches").display = self.query_one("#custom-batches").display = False
        self.query_one("#probe-box").border_title = "Probe"
        table = self.query_one("#instances", DataTable)
        for key, label in (("pick", "✓"), ("instance", "instance"), ("gpus", "GPUs"),
                           ("mem", "GPU mem"), ("vcpu", "vCPU"), ("price", "$/h"), ("fit", "fit"),
                           ("hosts", "host")):
            table.add_column(label, key=key)
        if len(self.config.hosts) == 1 or self.config.path is None:
            # no config file: the hosts were named on the command line (or are this machine)
            self.selected_hosts.update(h.name for h in self.config.hosts)
        self.fill_instances("")
        table.focus()
        self.update_summary()
        if self.provider is not None:
            self.check_leftovers()
        self.read_memory()
        if self.config.path is None and self.config.probe.command is None:
            self.notify("No config: probing this machine with a built-in workload. "
                        "To see a six-instance comparison: probecast replay "
                        "sample_logs/reconstructed-dissertation",
                        timeout=10)

    @work(thread=True, exclusive=True, group="aws", exit_on_error=False,
          description="look for leftover instances")
    def check_leftovers(self) -> None:
        from probecast.core.cloud.client import AwsError

        assert self.provider is not None
        aws = self.provider.aws
        try:
            left = self.provider.find_leftovers()
        except AwsError as exc:
            self.app.call_from_thread(self.notify, str(exc), severity="warning", timeout=10)
            return
        if left:
            self.app.call_from_thread(
                self.notify, f"{len(left)} instance(s) from earlier probecast sessions are still "
                f"up in {aws.region} ({', '.join(i['type'] for i in left)}): run "
                "`probecast cleanup` to terminate them", severity="error", timeout=20)

    @work(thread=True, exclusive=True, group="memory", exit_on_error=False,
          description="read earlier probes for a memory forecast")
    def read_memory(self) -> None:
        self.memory.load()
        self.app.call_from_thread(self._memory_read)

    def _memory_read(self) -> None:
        self.fill_instances(self.query_one("#filter", Input).value)
        self.update_summary()

    def workload_name(self) -> str:
        s = self.config.probe
        return workload_label(s.command) if s.command else str(
            self.query_one("#workload", Select).value)

    # ---- instances ----------------------------------------------------------------------------

    def hosts_by_instance(self) -> dict[str, list[Host]]:
        out: dict[str, list[Host]] = {}
        for h in self.config.hosts:
            out.setdefault(h.instance, []).append(h)
        return out

    def fill_instances(self, query: str) -> None:
        table = self.query_one("#instances", DataTable)
        table.clear()
        q = query.lower().strip()
        by_instance = self.hosts_by_instance()
        catalog = self.session.board.pricing.catalog  # the one price lookup's
        sky = [n for n in self.sky.candidates() if n not in by_instance] if self.sky else []
        names = list(by_instance) + sky + [i.instance for i in newest_first(catalog)
                                           if i.instance not in by_instance]
        workload, sizes = self.workload_name(), self.batch_sizes()
        for name in names:
            if name in sky:
                self._add_candidate(table, name, q)
                continue
            inst = catalog.get(name)
            hosts = by_instance.get(name, [])
            gpus = inst.gpus if inst else "-"
            mem = f"{inst.gpu_memory_gb:g}G" if inst and inst.gpu_memory_gb else "-"
            hay = " ".join([name, gpus, mem, *(h.name for h in hosts)]).lower()
            if q and q not in hay:
                continue
            price = inst.price_per_hour if inst is not None else None  # host, [prices], cache…
            picked = (any(h.name in self.selected_hosts for h in hosts) if hosts
                      else name in self.selected_launch)
            host_text = (Text(", ".join(h.name for h in hosts), style="green") if hosts
                         else Text("launch (aws)", style="yellow") if self.provider is not None
                         else Text("— add a host", style="dim"))
            fit = self.memory.cell(workload, sizes, name)
            table.add_row(
                Text("✓" if picked else "", style="bold green"), name, gpus, mem,
                str(inst.vcpus) if inst and inst.vcpus else "-",
                price_cell(price, inst),
                Text(fit, style="" if fit in ("all", "") else "bold yellow"), host_text, key=name)

    def _add_candidate(self, table: DataTable[Any], name: str, query: str) -> None:
        """A [skypilot] candidate: launched when picked; SkyPilot picks the instance (and its
        price, from its catalog) at launch."""
        assert self.sky is not None
        gpus = self.sky.gpus(name)
        if query and query not in f"{name} {gpus} skypilot".lower():
            return
        table.add_row(Text("✓" if name in self.selected_sky else "", style="bold green"), name,
                      gpus, "-", "-", "-", Text(""), Text("launch (skypilot)", style="yellow"),
                      key=name)

    @on(Input.Changed, "#filter")
    def _filter(self, event: Input.Changed) -> None:
        self.fill_instances(event.value)

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one("#instances", DataTable).focus()

    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    @on(DataTable.RowSelected, "#instances")
    def _row_selected(self) -> None:
        self.action_toggle_instance()

    def action_toggle_instance(self) -> None:
        table = self.query_one("#instances", DataTable)
        if not table.row_count:
            return
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        name = str(row_key.value)
        hosts = self.hosts_by_instance().get(name, [])
        if not hosts and self.sky is not None and name in self.sky.candidates():
            if name in self.selected_sky:  # launched through SkyPilot when the probes start
                self.selected_sky.remove(name)
            else:
                self.selected_sky.append(name)
            table.update_cell(row_key, "pick", Text("✓" if name in self.selected_sky else "",
                                                    style="bold green"))
            self.update_summary()
            return
        if not hosts and self.provider is None:
            self.notify(ADD_HOST_HINT.format(name=name), severity="warning", timeout=8)
            return
        if not hosts:  # launched on AWS when the probes start (after a confirmation)
            if name in self.selected_launch:
                self.selected_launch.remove(name)
            else:
                self.selected_launch.append(name)
            picked = name in self.selected_launch
        else:
            names = {h.name for h in hosts}
            if names & self.selected_hosts:
                self.selected_hosts -= names
            else:
                self.selected_hosts |= names
            picked = bool(names & self.selected_hosts)
        table.update_cell(row_key, "pick", Text("✓" if picked else "", style="bold green"))
        self.update_summary()

    # ---- settings -----------------------------------------------------------------------------

    @property
    def own_batch(self) -> bool:
        """No {batch_size} in the command: one probe a host, at the program's own batch size."""
        command = self.config.probe.command
        return command is not None and PLACEHOLDER not in command

    def batch_sizes(self) -> list[int]:
        if self.own_batch:
            return list(self.config.probe.batch_sizes)
        chosen = set(self.query_one("#batches", SelectionList).selected)
        for part in self.query_one("#custom-batches", Input).value.replace(",", " ").split():
            if part.isdigit() and int(part) > 0:
                chosen.add(int(part))
        return sorted(chosen)

    def settings(self) -> ProbeSettings:
        base = self.config.probe
        s = base.copy()
        s.batch_sizes = self.batch_sizes()
        if not base.command:
            s.workload = str(self.query_one("#workload", Select).value)
        max_steps = self.query_one("#max-steps", Input).value.strip()
        ci = self.query_one("#target-ci", Input).value.strip()
        epochs = self.query_one("#epochs", Input).value.strip()
        s.max_steps = int(max_steps) if max_steps else None
        try:
            s.target_ci = float(ci) if ci else None
        except ValueError:
            s.target_ci = None
        s = settings_for(s, typed_over=base)  # the probe's length: the one rule, as headless
        s.epochs = int(epochs) if epochs else None
        job_steps = self.query_one("#job-steps", Input).value.strip()
        s.steps = int(job_steps) if job_steps else None
        s.contenders = self.contenders
        return s

    def plan(self) -> list[Any]:
        hosts = [h for h in self.config.hosts if h.name in self.selected_hosts]
        return plan_probes(hosts, self.settings(), session_dir())

    @on(SelectionList.SelectedChanged)
    @on(Input.Changed, "#custom-batches, #max-steps, #target-ci, #epochs, #job-steps")
    @on(Select.Changed)
    def _settings_changed(self) -> None:  # the plan, worst case and fit column: once typing pauses
        self.summary_due.poke()

    def update_summary(self) -> None:
        plan = self.plan()
        s = self.settings()
        worst = worst_case_probe_cost(plan, self.session.board.pricing.catalog, s.timeout)
        hosts = len(self.selected_hosts)
        launch = [*self.selected_launch, *self.selected_sky]
        stop = describe_length(s)
        text = Text()
        text.append(f" {len(plan) + len(launch) * len(s.batch_sizes)} probes", "bold")
        where = f"{hosts} host" + (f" + {len(launch)} to launch" if launch else "")
        batches = "the program's batch size" if self.own_batch else f"{len(s.batch_sizes)} batch"
        text.append(f" ({where} × {batches}) · {stop} · worst ")
        priced = any(p.host.kind != "local" or p.host.price_per_hour is not None for p in plan)
        text.append(("free (this machine)" if not priced else fmt_cost(worst)) if worst is not None
                    else "? (no price)")
        text.append(f" (≤{s.timeout / 60:g} min each)", "dim")
        if self.find_batch:
            text.append(" · f: find the largest batch size that fits", "bold")
        elif self.contenders:
            text.append(" · c: only the contenders, the rest predicted", "bold")
        if self.selected_launch and self.provider is not None:  # its worst case, as confirmed
            q = self.provider.quote(self.selected_launch)
            text.append(f" · launch ≤ ${q.worst_usd:.2f} of ${q.max_spend:.2f}",
                        "bold red" if q.problem else "")
        picked = [h.instance for h in self.config.hosts if h.name in self.selected_hosts]
        self._refresh_fit(s.batch_sizes)
        text.append("\n" + self.memory.note(self.workload_name(), s.batch_sizes,
                                            [*picked, *launch]), "dim")
        self.query_one("#summary", Static).update(text)

    def _refresh_fit(self, sizes: list[int]) -> None:
        """The fit column for the batch sizes chosen now (cells that changed only)."""
        table = self.query_one("#instances", DataTable)
        workload = self.workload_name()
        for key in list(table.rows):
            fit = self.memory.cell(workload, sizes, str(key.value))
            cell = Text(fit, style="" if fit in ("all", "") else "bold yellow")
            if table.get_cell(key, "fit") != cell:
                table.update_cell(key, "fit", cell)

    def action_toggle_find(self) -> None:
        if self.own_batch:  # the search runs the command at batch sizes it cannot take
            self.notify(f"The command has no {PLACEHOLDER}: there is no batch size to search "
                        f"(put {PLACEHOLDER} where it takes one)", severity="warning", timeout=6)
            return
        self.find_batch = not self.find_batch
        self.notify("Start (s) searches each picked host for the largest batch size that fits, "
                    "from the smallest chosen one" if self.find_batch else
                    "Start (s) probes the chosen batch sizes", timeout=6)
        self.update_summary()

    def action_toggle_contenders(self) -> None:
        self.contenders = not self.contenders
        self.notify("Start (s) probes a few diverse candidates first and predicts the rest from "
                    "their GPU facts; a candidate is probed (or launched) only while its "
                    "predicted bounds overlap the leader's" if self.contenders else
                    "Start (s) probes every picked candidate", timeout=6)
        self.update_summary()

    def action_replay_hint(self) -> None:
        self.notify("Quit (q) and run: probecast replay sample_logs/reconstructed-dissertation "
                    "(the dissertation's six p2/p3 instances) or sample_logs/cpu-keras/probes "
                    "(real probes recorded here) - the same screens, replayed.", timeout=10)


def price_cell(price: float | None, inst: InstanceType | None) -> Text:
    """$/h to 3 decimals ('-' for none); a yellow '?' after a price nobody could verify (the
    catalog's ``price_status``), as `probecast prices` marks it."""
    text = Text(f"{price:.3f}" if price is not None else "-")
    if inst is not None and inst.unverified:
        text.append("?", style="bold yellow")
    return text
