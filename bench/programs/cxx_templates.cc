// A C++17 program as people write them: containers of containers, std::function, lambdas passed
// to algorithms, a template class, and worker threads; the names its profile holds are the long
// ones readers complain about (bench/name_lengths.sh).
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace analytics {

template <typename Key, typename Value>
class Index {
 public:
  void add(const Key& key, Value value) { entries_[key].push_back(std::move(value)); }
  template <typename Score>
  std::vector<std::pair<Key, double>> rank(Score score) const {
    std::vector<std::pair<Key, double>> ranked;
    for (const auto& [key, values] : entries_) {
      double total = 0;
      for (const Value& v : values) total += score(v);
      ranked.emplace_back(key, total);
    }
    std::sort(ranked.begin(), ranked.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
    return ranked;
  }

 private:
  std::map<Key, std::vector<Value>> entries_;
};

struct Record {
  std::string name;
  std::vector<double> samples;
};

double Crunch(const std::vector<Record>& records,
              const std::function<double(const Record&)>& weigh) {
  Index<std::string, Record> index;
  for (const Record& r : records) index.add(r.name.substr(0, 3), r);
  auto ranked = index.rank([&](const Record& r) { return weigh(r); });
  return ranked.empty() ? 0 : ranked.front().second;
}

}  // namespace analytics

int main() {
  std::vector<analytics::Record> records;
  for (int i = 0; i < 20000; ++i) {
    analytics::Record r{"rec" + std::to_string(i % 977), {}};
    for (int k = 0; k < 16; ++k) r.samples.push_back((i * 31 + k * 7) % 101);
    records.push_back(std::move(r));
  }
  std::unordered_map<int, double> results;
  std::vector<std::thread> workers;
  std::vector<double> out(4);
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&, t] {
      double best = 0;
      for (int round = 0; round < 15; ++round)
        best += analytics::Crunch(records, [t](const analytics::Record& r) {
          return std::accumulate(r.samples.begin(), r.samples.end(), 0.0) * (t + 1);
        });
      out[t] = best;
    });
  for (auto& w : workers) w.join();
  for (int t = 0; t < 4; ++t) results[t] = out[t];
  return results.size() == 4 ? 0 : 1;
}
