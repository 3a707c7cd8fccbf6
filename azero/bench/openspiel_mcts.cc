// OpenSpiel's C++ MCTSBot driven from C for `azero bench mcts`.
//
// A Python subclass of pyspiel.Evaluator cannot be handed to the C++ bot, so
// the trivial evaluator (uniform prior over legal actions, value 0) is written
// here in C++ against the headers the open_spiel wheel ships. setup.py builds
// it as a plain shared library; OpenSpiel's own symbols come from pyspiel.so,
// which exports them, when openspiel_mcts.py loads it.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "open_spiel/algorithms/mcts.h"
#include "open_spiel/spiel.h"

namespace {

class TrivialEvaluator : public open_spiel::algorithms::Evaluator {
 public:
  std::vector<double> Evaluate(const open_spiel::State& state) override {
    return std::vector<double>(state.NumPlayers(), 0.0);
  }
  open_spiel::ActionsAndProbs Prior(const open_spiel::State& state) override {
    std::vector<open_spiel::Action> legal = state.LegalActions();
    open_spiel::ActionsAndProbs prior;
    prior.reserve(legal.size());
    const double p = 1.0 / legal.size();
    for (open_spiel::Action a : legal) prior.emplace_back(a, p);
    return prior;
  }
};

}  // namespace

#ifndef AZERO_OPENSPIEL_VERSION
#error "setup.py defines AZERO_OPENSPIEL_VERSION: the open_spiel version of the headers"
#endif

extern "C" {

// The open_spiel version whose headers this library was compiled against.
const char* azero_openspiel_version() { return AZERO_OPENSPIEL_VERSION; }

// Plays `moves` moves of MCTSBot self-play (restarting finished games) with
// `sims` simulations each. evaluator: 0 = trivial, 1 = one random rollout.
// Returns wall seconds spent inside Step(); writes the simulations run.
double azero_openspiel_mcts(const char* game_string, int sims, int moves,
                            int evaluator, int seed, long long* total_sims) {
  std::shared_ptr<const open_spiel::Game> game = open_spiel::LoadGame(game_string);
  std::shared_ptr<open_spiel::algorithms::Evaluator> eval;
  if (evaluator == 0) {
    eval = std::make_shared<TrivialEvaluator>();
  } else {
    eval = std::make_shared<open_spiel::algorithms::RandomRolloutEvaluator>(1, seed);
  }
  // uct_c = 2 (OpenSpiel's default for its examples), 1 GB of tree, no solver.
  open_spiel::algorithms::MCTSBot bot(*game, eval, 2.0, sims, 1000, false, seed, false);
  std::unique_ptr<open_spiel::State> state = game->NewInitialState();
  double seconds = 0.0;
  long long done = 0;
  for (int m = 0; m < moves; ++m) {
    if (state->IsTerminal()) state = game->NewInitialState();
    auto t0 = std::chrono::steady_clock::now();
    open_spiel::Action a = bot.Step(*state);
    auto t1 = std::chrono::steady_clock::now();
    seconds += std::chrono::duration<double>(t1 - t0).count();
    done += sims;
    state->ApplyAction(a);
  }
  *total_sims = done;
  return seconds;
}

}  // extern "C"
