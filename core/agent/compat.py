"""Every framework name the agent's adapters touch, in one place: the modules whose import
installs them, the symbols they patch or call, the attributes they read or set on a framework's
objects, the parameters they pass or read by name.

The hook patches private internals (Keras' optimizer, tf.data's iterators, torch's DataLoader
iterator, the Lightning and Hugging Face trainers). A framework release that moves one would
leave a user's job untimed (the hook logs `hook-failed` and the program runs on), so the adapters
(core/agent/adapters/) take every name from here - none is written in an adapter - and
tests/e2e/test_framework_compat.py checks each against the oldest and the newest supported release
of each framework that installs here: a release that removes one fails our CI first.

A symbol is ``"module:qualname"``: the module to import, then the attribute path within it.
Attributes a framework sets on an instance (in ``__init__``, not on its class) are plain names,
listed by the class whose instances carry them.
"""

from __future__ import annotations

import importlib
from typing import Any

# ---- Keras 3 (adapters/keras_fit.py, keras_callback.py: fit(); keras_loops.py: custom loops) ---
KERAS_MODULE = "keras"  # the Keras adapters install when the program imports it
KERAS_VERSION = "keras:__version__"
KERAS_BACKEND = "keras:backend.backend"  # "tensorflow", "torch", "jax": what feeds its epochs
KERAS_FIT = "keras:Model.fit"  # wrapped: the probe's callback joins every fit()
KERAS_EVALUATE = "keras:Model.evaluate"  # the bounded validation passes after a probe stop
KERAS_CALLBACK = "keras:callbacks.Callback"  # ProbeCallback's base
KERAS_HISTORY = "keras:callbacks.History"  # what a fit() the probe ended returns
KERAS_HISTORY_SET_MODEL = "keras:callbacks.History.set_model"
# a custom-loop step
KERAS_OPTIMIZER_APPLY = "keras.src.optimizers.base_optimizer:BaseOptimizer.apply"
# counted: a program that made none updates its weights by hand (its tape's gradient is the step)
KERAS_OPTIMIZER_INIT = "keras.src.optimizers.base_optimizer:BaseOptimizer.__init__"
# callbacks that may end a fit before its epochs (matched by class name: the user's own import)
KERAS_EARLY_ENDING = ("keras:callbacks.EarlyStopping", "keras:callbacks.TerminateOnNaN")
# an EarlyStopping's: it stops no sooner than start_from_epoch + patience epochs past its first
# improvement (a baseline not beaten: no first improvement) - the low end of the job's length
KERAS_EARLY_STOPPING_WAIT = ("patience", "start_from_epoch", "baseline")
# Model.fit's parameters the adapter reads: the first four by position too, then by name only
KERAS_FIT_POSITIONAL = ("x", "y", "batch_size", "epochs")
KERAS_FIT_NAMED = ("steps_per_epoch", "validation_data", "validation_split", "validation_steps",
                   "validation_batch_size", "initial_epoch", "callbacks", "validation_freq")
KERAS_EVALUATE_NAMED = ("batch_size", "steps", "verbose", "return_dict")  # passed by name
# the Callback methods ProbeCallback overrides, and the keys of Callback.params it reads
KERAS_CALLBACK_HOOKS = ("on_train_begin", "on_epoch_begin", "on_train_batch_end", "on_test_begin",
                        "on_test_batch_end", "on_test_end", "on_epoch_end", "on_train_end")
KERAS_CALLBACK_PARAMS = "params"  # set on a Callback by fit(): a dict
KERAS_CALLBACK_MODEL = "model"  # set on a Callback by fit(): the Model it trains
KERAS_PARAMS_STEPS = "steps"
KERAS_PARAMS_EPOCHS = "epochs"
KERAS_MODEL_STOP = "stop_training"  # set on a Model (Trainer.__init__): fit ends after the batch
# compile(steps_per_execution=N): batches a call runs (callbacks see its last batch's index);
# Keras 3's int, tf.keras 2's tf.Variable
KERAS_STEPS_PER_EXECUTION = ("steps_per_execution", "_steps_per_execution")
KERAS_HISTORY_RECORDS = ("history", "epoch")  # set on a History (on_train_begin): its records

KERAS_OWN = ("keras", "tf_keras", "tensorflow")  # whose own dataset passes are no program loop's
# (fit()'s, predict()'s; a tf.distribute dataset iterating the one it wraps)
ARRAY_SHAPE = "shape"  # arrays' (NumPy's, any tensor's): fit()'s x given whole, not in batches

KERAS = (KERAS_VERSION, KERAS_BACKEND, KERAS_FIT, KERAS_EVALUATE, KERAS_CALLBACK, KERAS_HISTORY,
         KERAS_HISTORY_SET_MODEL, KERAS_OPTIMIZER_APPLY, KERAS_OPTIMIZER_INIT, *KERAS_EARLY_ENDING)

# ---- TensorFlow (adapters/keras_loops.py: tf.data epochs and the traced optimizer step) ---------
TF_DATASET_ITER = "tensorflow.python.data.ops.dataset_ops:DatasetV2.__iter__"  # a new epoch
TF_ITERATOR_NEXT = "tensorflow.python.data.ops.iterator_ops:OwnedIterator.__next__"  # stop point
TF_DATASET_CARDINALITY = "tensorflow.python.data.ops.dataset_ops:DatasetV2.cardinality"  # N_it
TF_EXECUTING_EAGERLY = "tensorflow:executing_eagerly"
TF_PY_FUNCTION = "tensorflow:py_function"  # the traced step's call back into Python
# the hop into Python a traced step's call back costs, measured once (graph_hop.py)
TF_INIT_SCOPE, TF_FUNCTION, TF_CONSTANT = "tensorflow:init_scope", "tensorflow:function", \
    "tensorflow:constant"
# the step of a loop with no Keras optimizer (hand-written updates: ``v.assign_sub(lr * g)``)
TF_TAPE_GRADIENT = "tensorflow.python.eager.backprop:GradientTape.gradient"

TENSORFLOW = (TF_DATASET_ITER, TF_ITERATOR_NEXT, TF_DATASET_CARDINALITY, TF_EXECUTING_EAGERLY,
              TF_PY_FUNCTION, TF_TAPE_GRADIENT, TF_INIT_SCOPE, TF_FUNCTION, TF_CONSTANT)

# ---- JAX (Keras 3 on its jax backend: a custom loop's step is traced in jax.jit) --------------
JAX_TRACER = "jax.core:Tracer"  # an optimizer's apply given these runs inside a trace
JAX_DEBUG_CALLBACK = "jax.debug:callback"  # the traced step's call back into Python, each run

# ---- PyTorch (adapters/torch_loops.py) ----------------------------------------------------------
TORCH_MODULE = "torch"  # the PyTorch adapter installs when the program imports it
TORCH_VERSION = "torch:__version__"
TORCH_STEP_HOOK = "torch.optim.optimizer:register_optimizer_step_post_hook"  # a step
TORCH_LOADER_ITER = "torch.utils.data:DataLoader.__iter__"  # a pass: an epoch, or validation
TORCH_LOADER_NEXT = "torch.utils.data.dataloader:_BaseDataLoaderIter.__next__"  # batches, the stop
TORCH_OPTIMIZER_INIT = "torch.optim:Optimizer.__init__"  # counted: none made, backward steps
TORCH_BACKWARD = "torch.autograd:backward"  # Tensor.backward calls it: the step without optimizer
TORCH_CUDA_SYNCHRONIZE = "torch.cuda:synchronize"  # the step clock's anchor and flush, on CUDA
TORCH_CUDA_EVENT = "torch.cuda:Event"  # each step's end on the device (torch_devices.CudaStepClock)
TORCH_CUDA_INITIALIZED = "torch.cuda:is_initialized"
TORCH_CUDA_DEVICE = "torch.cuda:current_device"
TORCH_IS_CUDA = "torch:Tensor.is_cuda"  # read on the optimizer's parameters
TORCH_ITEM = "torch:Tensor.item"
TORCH_TOLIST = "torch:Tensor.tolist"  # the agreed stop flag and gap (torch_devices.agree)
TORCH_DEVICE = "torch:device"
TORCH_TENSOR = "torch:tensor"
TORCH_OPTIMIZER_GROUPS = "param_groups"  # set on an Optimizer (__init__): its parameter groups
TORCH_GROUP_PARAMS = "params"  # a parameter group's key: its tensors
TORCH_LOADER_BATCH_SIZE = "batch_size"  # set on a DataLoader (None under a batch_sampler): the start's batch size
# torch.distributed: rank 0's stop decision, all-reduced (adapters/torch_devices.py: agree)
TORCH_DIST_AVAILABLE = "torch.distributed:is_available"
TORCH_DIST_INITIALIZED = "torch.distributed:is_initialized"
TORCH_DIST_WORLD_SIZE = "torch.distributed:get_world_size"
TORCH_DIST_BACKEND = "torch.distributed:get_backend"
TORCH_DIST_RANK = "torch.distributed:get_rank"
TORCH_DIST_ALL_REDUCE = "torch.distributed:all_reduce"
TORCH_DIST_MAX = "torch.distributed:ReduceOp.MAX"
TORCH_NCCL = "nccl"  # the backend whose collectives take CUDA tensors

TORCH = (TORCH_VERSION, TORCH_STEP_HOOK, TORCH_LOADER_ITER, TORCH_LOADER_NEXT,
         TORCH_OPTIMIZER_INIT, TORCH_BACKWARD, TORCH_CUDA_SYNCHRONIZE, TORCH_CUDA_EVENT,
         TORCH_CUDA_INITIALIZED, TORCH_CUDA_DEVICE, TORCH_IS_CUDA, TORCH_ITEM, TORCH_TOLIST,
         TORCH_DEVICE, TORCH_TENSOR, TORCH_DIST_AVAILABLE, TORCH_DIST_INITIALIZED,
         TORCH_DIST_WORLD_SIZE, TORCH_DIST_BACKEND, TORCH_DIST_RANK, TORCH_DIST_ALL_REDUCE, TORCH_DIST_MAX)

# ---- Lightning (adapters/lightning.py: its Trainer, stopped through its own flag) --------------
# the Trainer in both package names; its __init__ is patched (the module defines the class:
# importing the framework's top package does not import it)
LIGHTNING_TRAINERS = ("lightning.pytorch.trainer.trainer:Trainer",
                      "pytorch_lightning.trainer.trainer:Trainer")
TRAINER_INIT = "__init__"  # patched on each trainer class: the trainers are remembered as made
# set on a Trainer by its __init__: the stop flag, N_it and its accumulation, the length
LIGHTNING_STOP = "should_stop"
LIGHTNING_BATCHES = "num_training_batches"
LIGHTNING_ACCUMULATION = "accumulate_grad_batches"
LIGHTNING_MAX_EPOCHS = "max_epochs"
LIGHTNING_MAX_STEPS = "max_steps"
LIGHTNING_VAL_INTERVAL = "val_check_interval"
# batches between validations, set as fit starts (by __init__ too since 2.3: not checked on one)
LIGHTNING_VAL_CHECK_BATCH = "val_check_batch"
# its EarlyStopping callbacks (each a ``patience`` in validation checks), the epochs between
# validations, and the fewest epochs it trains whatever a callback says
LIGHTNING_EARLY_STOPPING = "early_stopping_callbacks"
LIGHTNING_PATIENCE = "patience"
LIGHTNING_VAL_EVERY_EPOCHS = "check_val_every_n_epoch"
LIGHTNING_MIN_EPOCHS = "min_epochs"
LIGHTNING_INSTANCE = (LIGHTNING_STOP, LIGHTNING_BATCHES, LIGHTNING_ACCUMULATION,
                      LIGHTNING_MAX_EPOCHS, LIGHTNING_MAX_STEPS, LIGHTNING_VAL_INTERVAL,
                      LIGHTNING_EARLY_STOPPING, LIGHTNING_VAL_EVERY_EPOCHS, LIGHTNING_MIN_EPOCHS)

# the EarlyStopping class in both package names (only checked: the Trainer lists its instances)
LIGHTNING_EARLY_STOPPING_CLASSES = ("lightning.pytorch.callbacks.early_stopping:EarlyStopping",
                                    "pytorch_lightning.callbacks.early_stopping:EarlyStopping")

LIGHTNING = (LIGHTNING_TRAINERS[0], f"{LIGHTNING_TRAINERS[0]}.{TRAINER_INIT}",
             LIGHTNING_EARLY_STOPPING_CLASSES[0])
PYTORCH_LIGHTNING = (LIGHTNING_TRAINERS[1], f"{LIGHTNING_TRAINERS[1]}.{TRAINER_INIT}",
                     LIGHTNING_EARLY_STOPPING_CLASSES[1])

# ---- Hugging Face (adapters/hf_trainer.py: its Trainer; Accelerate is only named) --------------
HF_TRAINER = "transformers.trainer:Trainer"
HF_ARGS = "args"  # set on a Trainer: its TrainingArguments
HF_CONTROL = "control"  # set on a Trainer: its TrainerControl
HF_TRAINER_INSTANCE = (HF_ARGS, HF_CONTROL)
HF_STOP = "transformers.trainer_callback:TrainerControl.should_training_stop"
# read on TrainingArguments: the accumulation, the length, the evaluation interval
HF_ACCUMULATION = "transformers.training_args:TrainingArguments.gradient_accumulation_steps"
HF_EPOCHS = "transformers.training_args:TrainingArguments.num_train_epochs"
HF_MAX_STEPS = "transformers.training_args:TrainingArguments.max_steps"
HF_EVAL_STEPS = "transformers.training_args:TrainingArguments.eval_steps"
# the evaluation strategy, by its name since 4.41, then by its name before (one of them exists)
HF_EVAL_STRATEGY = ("transformers.training_args:TrainingArguments.eval_strategy",
                    "transformers.training_args:TrainingArguments.evaluation_strategy")
HF_BY_STEPS = "steps"  # the strategy's value (an enum whose str ends in it) for "every K steps"
HF_BY_EPOCH = "epoch"  # ... and for "every epoch"
# its callbacks (on the Trainer's handler), an early stop among them and its patience (in
# evaluations; set on each instance)
HF_CALLBACK_HANDLER = "callback_handler"
HF_CALLBACK_LIST = "callbacks"
HF_EARLY_STOPPING = "transformers.trainer_callback:EarlyStoppingCallback"
HF_PATIENCE = "early_stopping_patience"

TRANSFORMERS = (HF_TRAINER, f"{HF_TRAINER}.{TRAINER_INIT}", HF_STOP, HF_ACCUMULATION, HF_EPOCHS,
                HF_MAX_STEPS, HF_EVAL_STEPS, HF_EARLY_STOPPING)
ACCELERATE = ("accelerate.accelerator:Accelerator",)  # its module loaded: the framework label

# ---- fastai (adapters/fastai_learner.py: its Learner; its DataLoader drives torch's iterators) --
# wrapped: each fit() is a trainer, its n_epoch (less start_epoch) the length - fit_one_cycle,
# fit_flat_cos and fine_tune's two fits all call it
FASTAI_FIT = "fastai.learner:Learner.fit"
FASTAI_FIT_START = "start_epoch"  # fit()'s parameters: the epochs a resumed fit skips, and the
FASTAI_FIT_CBS = "cbs"  # callbacks for this fit alone - lr_find's LRFinder among them, which
# ends its fit after num_it batches (sooner where the loss diverges, with stop_div): matched by
# class name; set on each instance
FASTAI_LR_FINDER = "fastai.callback.schedule:LRFinder"
FASTAI_LR_FINDER_STEPS = "num_it"
FASTAI_LR_FINDER_DIVERGE = "stop_div"
FASTAI_EPOCH = "fastai.learner:Learner._do_epoch"  # a stopped fit() leaves at its next epoch...
FASTAI_CANCEL_FIT = "fastai.learner:CancelFitException"  # ... raising what fit() ends on
# a pass: fastai's DataLoader iterates torch's _SingleProcess/_MultiProcessingDataLoaderIter over
# a stand-in of its own, not through torch's DataLoader.__iter__
FASTAI_LOADER_ITER = "fastai.data.load:DataLoader.__iter__"
FASTAI_LOADER_BATCH_SIZE = "bs"  # set on its DataLoader
FASTAI_DLS = "dls"  # set on a Learner: its DataLoaders, whose ``train`` is the training loader
FASTAI_TRAIN = "train"
FASTAI = (FASTAI_FIT, FASTAI_EPOCH, FASTAI_CANCEL_FIT, FASTAI_LOADER_ITER, FASTAI_LR_FINDER)

# ---- KerasTuner (adapters/keras_tuner.py: a search trains a new model each trial) -------------
# wrapped: a search's trials are its phase's fit() calls - remaining_trials() x executions_per_trial
KT_SEARCH = "keras_tuner.src.engine.base_tuner:BaseTuner.search"
KT_TRIAL = "keras_tuner.src.engine.trial:Trial"  # a STOPPED one ends search()'s loop of trials
KT_STOPPED = "keras_tuner.src.engine.trial:TrialStatus.STOPPED"
# wrapped: the trial whose fit the probe stopped is INVALID - its score partial, its checkpoint
# maybe never saved (its first epoch unfinished) - so get_best_models() picks a trial that ran
KT_RUN_TRIAL = "keras_tuner.src.engine.base_tuner:BaseTuner._try_run_and_update_trial"
KT_INVALID = "keras_tuner.src.engine.trial:TrialStatus.INVALID"
KT_ORACLE = "oracle"  # set on a tuner: its oracle, which makes each trial (create_trial) ...
KT_CREATE_TRIAL = "create_trial"
KT_REMAINING = "remaining_trials"  # ... knows how many are left (None: no max_trials) ...
KT_HYPERPARAMETERS = "hyperparameters"  # ... and its search space, which a trial carries
KT_EXECUTIONS = "executions_per_trial"  # set on a Tuner: the models fitted each trial
# a search ends when its space has no values left untried: each hyperparameter's values (a Float
# with no step is continuous), less the value sets tried (a set of their hashes on the oracle)
KT_SPACE, KT_VALUES, KT_CONTINUOUS, KT_TRIED = "space", "values", "Float", "_tried_so_far"
KT_STEP = "step"  # a Float's: None for a continuous one
KT_GRID = "keras_tuner.src.tuners.gridsearch:GridSearchOracle"  # no max_trials: every combination
# oracles whose trials fit for epochs of their own choosing (matched by class name) ...
KT_OWN_EPOCHS = ("keras_tuner.src.tuners.hyperband:HyperbandOracle",)
# ... Hyperband's, counted from its own schedule: each iteration runs its brackets, each bracket
# its rounds of _get_size(b, r) trials, each trained from _get_epochs(b, r - 1) to _get_epochs(b, r)
KT_HYPERBAND_SCHEDULE = ("hyperband_iterations", "_get_num_brackets", "_get_size", "_get_epochs")
KT_HYPERBAND_STATE = ("_brackets", "_current_bracket", "_current_iteration")  # where it is
KERAS_TUNER = (KT_SEARCH, KT_TRIAL, KT_STOPPED, KT_RUN_TRIAL, KT_INVALID, KT_GRID, *KT_OWN_EPOCHS)

# ---- Optuna (adapters/optuna_study.py: a study runs the program's objective once a trial) ----
# wrapped: the objective's training, n_trials times; ended after the trial the probe stopped
OPTUNA_OPTIMIZE = "optuna.study.study:Study.optimize"
OPTUNA_PARAMETERS = ("func", "n_trials", "timeout")  # optimize()'s, by name
OPTUNA_STOP = "optuna.study.study:Study.stop"  # the study leaves its loop after this trial
OPTUNA_PRUNER = "pruner"  # set on a study: a NopPruner prunes nothing ...
OPTUNA_NO_PRUNING = "optuna.pruners._nop:NopPruner"
# ... a MedianPruner (Optuna's default) none before these reports, nor before these trials ran
OPTUNA_PRUNER_WAIT = ("_n_warmup_steps", "_n_startup_trials")
# a study's trials (FrozenTrial, the running one last) and what each reported (trial.report):
# a pruner acts on those values only - a trial that reported none can be pruned by none
OPTUNA_TRIALS = "trials"
OPTUNA_REPORTED = "intermediate_values"
OPTUNA = (OPTUNA_OPTIMIZE, OPTUNA_STOP, OPTUNA_NO_PRUNING)

# ---- Stable-Baselines3 (adapters/sb3_learn.py: learn() runs its own loop of rollouts) ---------
# wrapped: the algorithm learn() is called on is the trainer the PyTorch loops adapter asks
SB3_LEARN = ("stable_baselines3.common.on_policy_algorithm:OnPolicyAlgorithm.learn",
             "stable_baselines3.common.off_policy_algorithm:OffPolicyAlgorithm.learn")
SB3_LEARN_PARAMETERS = ("total_timesteps", "callback")  # learn()'s first two, by position or name
# callbacks that may end learn() before its timesteps (matched by class name), found among the
# callbacks given - a list, a CallbackList's, an EvalCallback's on a new best or after each eval
SB3_EARLY_ENDING = ("stable_baselines3.common.callbacks:StopTrainingOnRewardThreshold",
                    "stable_baselines3.common.callbacks:StopTrainingOnNoModelImprovement",
                    "stable_baselines3.common.callbacks:StopTrainingOnMaxEpisodes")
SB3_CALLBACK_CHILDREN = ("callbacks", "callback", "callback_on_new_best")
# wrapped: once the probe stops (and the update under way has run), the next rollout is not
# collected - learn() leaves its loop (on-policy: collect_rollouts returns False; off-policy: a
# RolloutReturn saying so)
SB3_COLLECT = ("stable_baselines3.common.on_policy_algorithm:OnPolicyAlgorithm.collect_rollouts",
               "stable_baselines3.common.off_policy_algorithm:OffPolicyAlgorithm.collect_rollouts")
SB3_ROLLOUT_RETURN = "stable_baselines3.common.type_aliases:RolloutReturn"
SB3_ROLLOUT_BUFFER = "rollout_buffer"  # set on an on-policy algorithm (an off-policy one has none)
# set on an algorithm: an on-policy one collects n_steps in each of n_envs environments, then
# trains n_epochs passes of batch_size minibatches (A2C: neither - one batch of the rollout) ...
SB3_ON_POLICY = ("n_steps", "n_envs", "n_epochs", "batch_size")
SB3_TARGET_KL = "target_kl"  # PPO's: a pass whose KL passes 1.5 x it ends the rollout's passes
# ... an off-policy one collects train_freq (a TrainFreq: frequency, unit) steps in each
# environment, then, past learning_starts steps, takes gradient_steps (-1: one per step) steps
SB3_OFF_POLICY = ("train_freq", "n_envs", "learning_starts", "gradient_steps")
SB3_TRAIN_FREQ = ("frequency", "unit")  # a TrainFreq's (a named tuple)
SB3_TRAIN_FREQ_STEP = "stable_baselines3.common.type_aliases:TrainFrequencyUnit.STEP"
STABLE_BASELINES3 = (*SB3_LEARN, *SB3_COLLECT, SB3_ROLLOUT_RETURN, SB3_TRAIN_FREQ_STEP,
                     *SB3_EARLY_ENDING)

# ---- PyTorch Ignite (adapters/ignite_engine.py: Engine.run runs its own loop of epochs) --------
# wrapped: a run begun while no other is under way is the trainer the PyTorch loops adapter asks
IGNITE_RUN = "ignite.engine.engine:Engine.run"
IGNITE_RUN_DATA = "data"  # run()'s first parameter, by position or name
IGNITE_STATE = "state"  # set on an Engine: its State, which run() sets up before its loop ...
IGNITE_LENGTH = ("max_epochs", "epoch_length")  # ... the run's length (epoch_length: len(data))
IGNITE_MAX_ITERS = "max_iters"  # ... or its iterations (0.5 on; max_epochs then derived)
IGNITE_COUNTERS = ("epoch", "iteration")  # ... and where it stands (a resumed run: not at 0)
IGNITE_TERMINATE = "terminate"  # an Engine's: it ends the run after the iteration under way
# read: an Engine's handlers by event, each (function, args, kwargs); one added for an event with
# a filter (`Events.EPOCH_COMPLETED(every=3)`) is a wrapper whose closure holds the filter, whose
# closure holds `every` (its handler: the wrapper's __wrapped__)
IGNITE_HANDLERS = "_event_handlers"
IGNITE_FILTER_CELLS = ("event_filter", "every")
IGNITE_EVERY_EVENTS = ("iteration_completed", "epoch_completed")  # the events' values ...
IGNITE_EVENT_VALUE = "value"  # ... (an event, filtered or not, is keyed by its own)
# constructor patched: an EarlyStopping made for a trainer (its `trainer`) may end that run after
# `patience` evaluations without improvement (it calls the trainer's terminate())
IGNITE_EARLY_STOPPING = "ignite.handlers.early_stopping:EarlyStopping"
IGNITE_EARLY_STOPPING_SETTINGS = ("trainer", "patience")
IGNITE = (IGNITE_RUN, "ignite.engine.engine:Engine.terminate", IGNITE_EARLY_STOPPING,
          f"{IGNITE_EARLY_STOPPING}.{TRAINER_INIT}")

# By distribution (what pip installs): every symbol the agent relies on in it.
BY_FRAMEWORK: dict[str, tuple[str, ...]] = {
    "keras": KERAS,
    "tensorflow": TENSORFLOW,
    "torch": TORCH,
    "lightning": LIGHTNING,
    "pytorch_lightning": PYTORCH_LIGHTNING,
    "transformers": TRANSFORMERS,
    "accelerate": ACCELERATE,
    "fastai": FASTAI,
    "keras_tuner": KERAS_TUNER,
    "optuna": OPTUNA,
    "stable_baselines3": STABLE_BASELINES3,
    "ignite": IGNITE,
}

# The releases supported (pyproject's extras say the same): the oldest, and the newest checked.
# tests/e2e/test_framework_compat.py checks the newest in the test environment and installs the
# oldest where it installs cheaply (pure-Python wheels); TensorFlow's oldest (a second TensorFlow
# of hundreds of MB that needs NumPy < 2) and torch's (a CUDA build of several GB: PyPI has no
# CPU one) do not - docs/ARCHITECTURE.md, "Framework adapters".
OLDEST = {"keras": "3.0.0", "tensorflow": "2.16.1", "torch": "2.1.0", "lightning": "2.2.0",
          "pytorch_lightning": "2.2.0", "transformers": "4.40.0", "accelerate": "0.30.0",
          "fastai": "2.7.0", "keras_tuner": "1.4.6", "optuna": "3.6.0",
          "stable_baselines3": "2.0.0", "ignite": "0.4.9"}
# Where pip's name for a distribution is not its import name
DISTRIBUTION = {"ignite": "pytorch-ignite"}


def module_of(symbol: str) -> str:
    """The module a symbol lives in (the one whose import installs its adapter)."""
    return symbol.partition(":")[0]


def attribute(symbol: str) -> str:
    """The last name of a symbol: the attribute to read on an instance of its class."""
    return symbol.partition(":")[2].rpartition(".")[2]


def resolve(symbol: str) -> Any:
    """The object a symbol names (imports its module); ImportError / AttributeError if gone."""
    module_name, _, qualname = symbol.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in filter(None, qualname.split(".")):
        obj = getattr(obj, part)
    return obj


def keras_framework(extra: str = "") -> str:
    """The log's framework for Keras: its version, and its backend where it is not TensorFlow
    ("keras 3.15.1 (custom loop, torch backend)") - only TensorFlow's feeds its epochs through
    tf.data iterators, whose teardown stalls (the model's constants for Keras are those)."""
    backend = str(resolve(KERAS_BACKEND)())
    words = ", ".join(w for w in (extra, f"{backend} backend" if backend != "tensorflow" else "")
                      if w)
    return f"keras {resolve(KERAS_VERSION)}" + (f" ({words})" if words else "")


def keras_steps_per_execution(model: Any) -> int:
    """The batches one call of the model's train function runs (compile's steps_per_execution;
    1 where it is not set or not a number, as tf.keras' ``"auto"`` tuning is not)."""
    for name in KERAS_STEPS_PER_EXECUTION:
        value: Any = getattr(model, name, None)
        try:
            n = int(value.numpy() if hasattr(value, "numpy") else value)
        except (TypeError, ValueError):
            continue
        if n >= 1:
            return n
    return 1


def owner(symbol: str) -> tuple[Any, str]:
    """What to patch for a symbol: (the object holding the attribute, the attribute's name)."""
    module_name, _, qualname = symbol.partition(":")
    head, _, name = qualname.rpartition(".")
    if not head:  # a module's own function
        return importlib.import_module(module_name), name
    return resolve(f"{module_name}:{head}"), name
