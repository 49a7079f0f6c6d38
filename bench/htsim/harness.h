// What the htsim harnesses share: the process's CPU time, and reading their
// "-name value" options.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>

inline double cpu_now() {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// A wall clock and the process's CPU clock, started together.
struct Stopwatch {
    std::chrono::steady_clock::time_point wall0 = std::chrono::steady_clock::now();
    double cpu0 = cpu_now();
    double wall() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    }
    double cpu() const { return cpu_now() - cpu0; }
};

// The event loop run to its end: the events it ran, its wall and CPU seconds.
struct Loop {
    uint64_t events;
    double wall, cpu;
};

template <class Events>
Loop run_to_end(Events& eventlist) {
    Stopwatch clock;
    uint64_t events = 0;
    while (eventlist.doNextEvent()) events++;
    return {events, clock.wall(), clock.cpu()};
}

// The command line as "-name value" pairs: option() reads the next name,
// value() its value, exiting with status 2 and the option's name when it has
// none.
class Options {
public:
    Options(int argc, char** argv) : _argc(argc), _argv(argv) {}
    bool more() const { return _i + 1 < _argc; }
    const std::string& option() {
        _name = _argv[++_i];
        return _name;
    }
    const char* value() {
        if (_i + 1 >= _argc) {
            std::cerr << "missing value for " << _name << std::endl;
            exit(2);
        }
        return _argv[++_i];
    }
    int unknown() const {
        std::cerr << "unknown option " << _name << std::endl;
        return 2;
    }

private:
    int _argc;
    char** _argv;
    int _i = 0;
    std::string _name;
};
