import { agentConformance } from '@turnkit/testing/conformance';
import { resumeTurn, runTurn } from '@turnkit/inline';

// runTurn and resumeTurn take the multi-agent suite's options as they are: no adapter.
agentConformance('inline', runTurn, resumeTurn);
