"""What core/agent/compat.py names, checked against one installed framework: every symbol
resolves, every attribute the adapters read is on a real instance, every parameter they read or
pass by name is in the real signature. Run in the test process for the frameworks installed
there (the newest), and as ``python compat_checks.py FRAMEWORK...`` with the oldest supported
releases first on PYTHONPATH (test_framework_compat.py installs them): it prints one JSON object,
{framework: [version, [problems]]}."""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from probecast.core.agent import compat


def missing(symbols: tuple[str, ...]) -> list[str]:
    gone = []
    for symbol in symbols:
        try:
            compat.resolve(symbol)
        except (ImportError, AttributeError) as exc:
            gone.append(f"{symbol} ({type(exc).__name__}: {exc})")
    return gone


def _lacks(obj: Any, names: tuple[str, ...], what: str) -> list[str]:
    return [f"{what}.{name}" for name in names if not hasattr(obj, name)]


def _parameters(symbol: str) -> list[str]:
    return list(inspect.signature(compat.resolve(symbol)).parameters)


def keras() -> list[str]:
    problems = missing(compat.KERAS)
    fit = _parameters(compat.KERAS_FIT)
    if fit[1:5] != list(compat.KERAS_FIT_POSITIONAL):  # after self: read by position too
        problems.append(f"Model.fit's first parameters are {fit[1:5]}")
    problems += [f"Model.fit({name}=)" for name in compat.KERAS_FIT_NAMED if name not in fit]
    evaluate = _parameters(compat.KERAS_EVALUATE)
    problems += [f"Model.evaluate({name}=)" for name in compat.KERAS_EVALUATE_NAMED
                 if name not in evaluate]
    k = importlib.import_module("keras")
    problems += _lacks(k.callbacks.Callback, compat.KERAS_CALLBACK_HOOKS, "Callback")
    model = k.Sequential([k.Input((2,)), k.layers.Dense(1)])
    if f"self.{compat.KERAS_MODEL_STOP}" not in inspect.getsource(compat.resolve(compat.KERAS_FIT)):
        problems.append(f"Model.fit does not read self.{compat.KERAS_MODEL_STOP}")  # set by fit
    callback = k.callbacks.Callback()
    callback.set_model(model)
    callback.set_params({compat.KERAS_PARAMS_STEPS: 1, compat.KERAS_PARAMS_EPOCHS: 1})
    problems += _lacks(callback, (compat.KERAS_CALLBACK_PARAMS, compat.KERAS_CALLBACK_MODEL),
                       "Callback")
    problems += _lacks(k.callbacks.EarlyStopping(), compat.KERAS_EARLY_STOPPING_WAIT,
                       "EarlyStopping")
    model.compile("sgd", "mse", steps_per_execution=3)
    if compat.keras_steps_per_execution(model) != 3:  # read off the model a callback holds
        problems.append(f"compile(steps_per_execution=3) is not in {compat.KERAS_STEPS_PER_EXECUTION}")
    history = k.callbacks.History()
    history.on_train_begin()
    return problems + _lacks(history, compat.KERAS_HISTORY_RECORDS, "History")


def tensorflow() -> list[str]:
    return missing(compat.TENSORFLOW)


def torch() -> list[str]:
    problems = missing(compat.TORCH)
    t = importlib.import_module("torch")
    optimizer = t.optim.SGD([t.zeros(1, requires_grad=True)], lr=0.1)
    problems += _lacks(optimizer, (compat.TORCH_OPTIMIZER_GROUPS,), "Optimizer")
    groups = getattr(optimizer, compat.TORCH_OPTIMIZER_GROUPS, [{}])
    if compat.TORCH_GROUP_PARAMS not in groups[0]:
        problems.append(f"Optimizer.param_groups[0][{compat.TORCH_GROUP_PARAMS!r}]")
    loader = t.utils.data.DataLoader(t.utils.data.TensorDataset(t.zeros(4)), batch_size=2)
    return problems + _lacks(loader, (compat.TORCH_LOADER_BATCH_SIZE,), "DataLoader")


def _lightning(package: str) -> list[str]:
    symbols = compat.BY_FRAMEWORK[package]
    problems = missing(symbols)
    if problems:
        return problems
    trainer = compat.resolve(symbols[0])(
        logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, accelerator="cpu", max_epochs=2)
    stop = compat.resolve(symbols[2])(monitor="val_loss")
    fit_loop = importlib.import_module(symbols[0].split(".trainer.trainer")[0] + ".loops.fit_loop")
    if f"trainer.{compat.LIGHTNING_VAL_CHECK_BATCH} =" not in inspect.getsource(fit_loop):
        problems.append(f"the fit loop sets no Trainer.{compat.LIGHTNING_VAL_CHECK_BATCH}")
    return (problems + _lacks(trainer, compat.LIGHTNING_INSTANCE, "Trainer")
            + _lacks(stop, (compat.LIGHTNING_PATIENCE,), "EarlyStopping"))


def transformers() -> list[str]:
    problems = missing(compat.TRANSFORMERS)
    t = importlib.import_module("torch")
    arguments = importlib.import_module("transformers").TrainingArguments
    strategy = [s for s in compat.HF_EVAL_STRATEGY if not missing((s,))]
    if not strategy:
        problems.append(f"none of {compat.HF_EVAL_STRATEGY}")
    with tempfile.TemporaryDirectory() as out:
        trainer = compat.resolve(compat.HF_TRAINER)(
            model=t.nn.Linear(2, 1), args=arguments(output_dir=out, report_to=[], use_cpu=True))
    problems += _lacks(trainer, compat.HF_TRAINER_INSTANCE + (compat.HF_CALLBACK_HANDLER,),
                       "Trainer")
    problems += _lacks(getattr(trainer, compat.HF_CALLBACK_HANDLER, None),
                       (compat.HF_CALLBACK_LIST,), "Trainer.callback_handler")
    problems += _lacks(compat.resolve(compat.HF_EARLY_STOPPING)(), (compat.HF_PATIENCE,),
                       "EarlyStoppingCallback")
    control = getattr(trainer, compat.HF_CONTROL, None)
    return problems + _lacks(control, (compat.attribute(compat.HF_STOP),), "Trainer.control")


def accelerate() -> list[str]:
    return missing(compat.ACCELERATE)


def fastai() -> list[str]:
    problems = missing(compat.FASTAI)
    if problems:
        return problems
    t = importlib.import_module("torch")
    loader = compat.resolve(compat.FASTAI_LOADER_ITER.rpartition(".")[0])
    loaders = importlib.import_module("fastai.data.core").DataLoaders
    train = loader(list(range(8)), bs=4)
    learner = compat.resolve(compat.FASTAI_FIT.rpartition(".")[0])(
        loaders(train, loader(list(range(4)), bs=4)), t.nn.Linear(1, 1),
        loss_func=t.nn.MSELoss())
    dls = getattr(learner, compat.FASTAI_DLS, None)
    problems += _lacks(learner, (compat.FASTAI_DLS,), "Learner")
    problems += _lacks(dls, (compat.FASTAI_TRAIN,), "Learner.dls")
    problems += _lacks(train, (compat.FASTAI_LOADER_BATCH_SIZE,), "DataLoader")
    problems += _lacks(compat.resolve(compat.FASTAI_LR_FINDER)(),
                       (compat.FASTAI_LR_FINDER_STEPS, compat.FASTAI_LR_FINDER_DIVERGE), "LRFinder")
    fit = inspect.signature(compat.resolve(compat.FASTAI_FIT)).parameters
    if list(fit).index(compat.FASTAI_FIT_CBS) != 4:
        problems.append(f"Learner.fit's {compat.FASTAI_FIT_CBS} (3rd after self)")
    if list(fit).index(compat.FASTAI_FIT_START) != 6:
        problems.append(f"Learner.fit's {compat.FASTAI_FIT_START} (6th after self)")
    return problems


def keras_tuner() -> list[str]:
    problems = missing(compat.KERAS_TUNER)
    if problems:
        return problems
    k = importlib.import_module("keras")

    def build(hp: Any) -> Any:
        return k.Sequential([k.Input((2,)), k.layers.Dense(hp.Int("units", 1, 4))])

    with tempfile.TemporaryDirectory() as out:
        tuner = importlib.import_module("keras_tuner").RandomSearch(
            build, objective="val_loss", max_trials=3, directory=out)
        oracle = getattr(tuner, compat.KT_ORACLE, None)
        problems += _lacks(tuner, (compat.KT_ORACLE, compat.KT_EXECUTIONS), "Tuner")
        problems += _lacks(oracle, (compat.KT_CREATE_TRIAL, compat.KT_REMAINING,
                                    compat.KT_HYPERPARAMETERS), "Oracle")
        if not problems and getattr(oracle, compat.KT_REMAINING)() != 3:
            problems.append(f"Oracle.{compat.KT_REMAINING}() of a fresh search of 3 trials")
        if not problems:  # a STOPPED trial made as the adapter makes one
            space = getattr(oracle, compat.KT_HYPERPARAMETERS).copy()
            trial = compat.resolve(compat.KT_TRIAL)(space, trial_id="x",
                                                    status=compat.resolve(compat.KT_STOPPED))
            problems += _lacks(trial, ("status",), "Trial")
    return problems + _hyperband()


def _hyperband() -> list[str]:
    """The trials and epochs the adapter reads from a fresh Hyperband oracle are those a real
    search then runs. max_epochs=3, factor=3: two brackets - three 1-epoch trials, the best
    going on 2 epochs more, then two trials of 3 epochs (6 trials, 11 epochs) - but a space of
    4 values has one left for the second bracket, whose next trial ends the search: 5, 8."""
    from probecast.core.agent.adapters.keras_tuner import hyperband_plan, new_combinations

    problems = _lacks(compat.resolve(compat.KT_OWN_EPOCHS[0])(max_epochs=3),
                      compat.KT_HYPERBAND_SCHEDULE + compat.KT_HYPERBAND_STATE, "HyperbandOracle")
    k, np = importlib.import_module("keras"), importlib.import_module("numpy")

    def build(hp: Any) -> Any:
        model = k.Sequential([k.Input((2,)), k.layers.Dense(hp.Int("units", 1, 4)),
                              k.layers.Dense(1)])
        model.compile("sgd", "mse")
        return model

    ran: list[int] = []  # a class attribute: KerasTuner deep-copies each trial's callbacks

    class Count(k.callbacks.Callback):  # type: ignore[misc]
        epochs = ran

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            self.epochs.append(epoch)

    with tempfile.TemporaryDirectory() as out:
        tuner = importlib.import_module("keras_tuner").Hyperband(
            build, objective="val_loss", max_epochs=3, factor=3, seed=0, directory=out)
        oracle = getattr(tuner, compat.KT_ORACLE)
        planned = hyperband_plan(oracle, new_combinations(oracle))
        x = np.arange(16, dtype="float32").reshape(8, 2)
        tuner.search(x, x[:, :1], validation_data=(x, x[:, :1]), callbacks=[Count()], verbose=0)
        trials = len(oracle.trials)
    if problems or planned != (trials, len(ran)):
        problems.append(f"Hyperband: planned (trials, epochs) {planned}, ran {(trials, len(ran))}")
    return problems


def optuna() -> list[str]:
    """A real study made as a program makes one: optimize()'s parameters by name, stop() ending
    it from inside its objective, its pruner set on it."""
    problems = missing(compat.OPTUNA)
    if problems:
        return problems
    names = _parameters(compat.OPTUNA_OPTIMIZE)
    problems += [f"Study.optimize({p}=)" for p in compat.OPTUNA_PARAMETERS if p not in names]
    optuna_module = importlib.import_module("optuna")
    optuna_module.logging.set_verbosity(optuna_module.logging.WARNING)
    study = optuna_module.create_study()
    problems += _lacks(study, (compat.OPTUNA_PRUNER,), "Study")
    problems += _lacks(getattr(study, compat.OPTUNA_PRUNER, None), compat.OPTUNA_PRUNER_WAIT,
                       "MedianPruner (a study's default)")
    stop = compat.attribute(compat.OPTUNA_STOP)

    reported: list[Any] = []

    def objective(trial: Any) -> float:
        trial.report(0.5, 0)
        # what the running trial reported, as the adapter reads it after the trial it timed
        reported.append(getattr(getattr(study, compat.OPTUNA_TRIALS)[-1],
                                compat.OPTUNA_REPORTED, None))
        getattr(study, stop)()  # as the adapter does, after the trial it timed
        return float(trial.suggest_float("x", 0, 1))

    study.optimize(objective, n_trials=5)
    if len(study.trials) != 1:
        problems.append(f"Study.{stop}() in the objective: {len(study.trials)} trials of 5 ran")
    if reported != [{0: 0.5}]:
        problems.append(f"Study.{compat.OPTUNA_TRIALS}[-1].{compat.OPTUNA_REPORTED} in the "
                        f"objective after trial.report(0.5, 0): {reported}")
    return problems


def stable_baselines3() -> list[str]:
    """Real learn() calls, a PPO's and a DQN's, on CartPole: the settings the adapter reads are on
    the algorithms, and the optimizer steps each took are the ones the adapter counts."""
    problems = missing(compat.STABLE_BASELINES3)
    if problems:
        return problems
    for symbol in compat.SB3_LEARN:
        if _parameters(symbol)[1:3] != list(compat.SB3_LEARN_PARAMETERS):
            problems.append(f"{symbol}'s first parameter is not {compat.SB3_LEARN_PARAMETERS}")
    from probecast.core.agent.adapters.sb3_learn import _early_ending, _Learn

    sb3 = importlib.import_module("stable_baselines3")
    callbacks = importlib.import_module("stable_baselines3.common.callbacks")
    env = importlib.import_module("gymnasium").make("CartPole-v1")
    nested = callbacks.CallbackList([callbacks.EvalCallback(
        env, callback_on_new_best=callbacks.StopTrainingOnRewardThreshold(100.0))])
    if _early_ending(nested) != "StopTrainingOnRewardThreshold":  # found where it sits
        problems.append(f"an EvalCallback's StopTrainingOnRewardThreshold in a CallbackList: "
                        f"{_early_ending(nested)!r}")
    steps = [0]
    hooks = importlib.import_module("torch.optim.optimizer")
    handle = hooks.register_optimizer_step_post_hook(  # every optimizer's steps, counted
        lambda *_: steps.__setitem__(0, steps[0] + 1))
    try:
        for algorithm, settings, timesteps in (
                (sb3.PPO, {"n_steps": 64, "batch_size": 24, "n_epochs": 2}, 130),
                (sb3.DQN, {"learning_starts": 50, "train_freq": 4, "gradient_steps": 2}, 200)):
            model = algorithm("MlpPolicy", "CartPole-v1", seed=0, **settings)
            names = compat.SB3_ON_POLICY if algorithm is sb3.PPO else compat.SB3_OFF_POLICY
            problems += _lacks(model, names, algorithm.__name__)
            record = _Learn(model, timesteps)
            counted = (record.iterations() or 0) * (record.per_iteration() or 0) \
                if record.on_policy else (record.off_policy_steps() or (0, ""))[0]
            steps[0] = 0
            model.learn(timesteps)
            if steps[0] != counted or counted == 0:
                problems.append(f"{algorithm.__name__}.learn({timesteps}): {steps[0]} optimizer "
                                f"steps, counted {counted}")
    finally:
        handle.remove()
    return problems


def ignite() -> list[str]:
    """A real run of an Engine over 6 items for 3 epochs, terminated at its 8th iteration as the
    probe terminates one: the state carries the length the adapter reads and the counters it
    sets, terminate() ends the run after that iteration, and an EarlyStopping names its trainer
    and patience; handlers added every K epochs or iterations are read with their K."""
    problems = missing(compat.IGNITE)
    if problems:
        return problems
    if _parameters(compat.IGNITE_RUN)[1] != compat.IGNITE_RUN_DATA:
        problems.append(f"Engine.run's first parameter is not {compat.IGNITE_RUN_DATA}")
    engine_class = compat.resolve(compat.IGNITE_RUN.rpartition(".")[0])
    events = importlib.import_module("ignite.engine").Events
    engine = engine_class(lambda engine, batch: None)
    seen: list[tuple[Any, ...]] = []

    def at_iteration(engine: Any) -> None:
        state = getattr(engine, compat.IGNITE_STATE)
        if not seen:
            seen.append(tuple(getattr(state, n, None) for n in compat.IGNITE_LENGTH))
        if state.iteration == 8:
            getattr(engine, compat.IGNITE_TERMINATE)()

    engine.add_event_handler(events.ITERATION_COMPLETED, at_iteration)
    engine.run(range(6), max_epochs=3)
    state = getattr(engine, compat.IGNITE_STATE)
    if seen != [(3, 6)]:
        problems.append(f"the state's {compat.IGNITE_LENGTH} in a run: {seen}")
    counters = tuple(getattr(state, n, None) for n in compat.IGNITE_COUNTERS)
    if counters != (2, 8):
        problems.append(f"terminate() at iteration 8 left {compat.IGNITE_COUNTERS} at {counters}")
    stopper = compat.resolve(compat.IGNITE_EARLY_STOPPING)(
        patience=2, score_function=lambda engine: 0.0, trainer=engine)
    problems += _lacks(stopper, compat.IGNITE_EARLY_STOPPING_SETTINGS, "EarlyStopping")
    from probecast.core.agent.adapters.ignite_engine import filtered_work

    def run_validation(engine: Any) -> None:
        pass

    engine.add_event_handler(events.EPOCH_COMPLETED(every=3) | events.COMPLETED, run_validation)
    engine.add_event_handler(events.ITERATION_COMPLETED(every=100), run_validation)
    work = {kind: every for kind, (every, _) in filtered_work(engine).items()}
    if work != {"epoch_completed": 3, "iteration_completed": 100}:
        problems.append(f"handlers added every=3 epochs and every=100 iterations read as {work}")
    return problems


CHECKS: dict[str, Callable[[], list[str]]] = {
    "keras": keras, "tensorflow": tensorflow, "torch": torch,
    "lightning": lambda: _lightning("lightning"),
    "pytorch_lightning": lambda: _lightning("pytorch_lightning"),
    "transformers": transformers, "accelerate": accelerate, "fastai": fastai,
    "keras_tuner": keras_tuner, "optuna": optuna, "stable_baselines3": stable_baselines3,
    "ignite": ignite,
    "jax": lambda: missing((compat.JAX_TRACER, compat.JAX_DEBUG_CALLBACK)),  # Keras on jax
}


def version(framework: str) -> str:
    return str(importlib.import_module(framework).__version__)


if __name__ == "__main__":
    print(json.dumps({f: [version(f), CHECKS[f]()] for f in sys.argv[1:]}))
