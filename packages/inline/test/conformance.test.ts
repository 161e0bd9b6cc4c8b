import { interpreterConformance } from '@turnkit/testing/conformance';
import { resumeTurn, runTurn } from '@turnkit/inline';

// runTurn and resumeTurn take the suite's options as they are: no adapter.
interpreterConformance('inline', runTurn, { resume: resumeTurn });
