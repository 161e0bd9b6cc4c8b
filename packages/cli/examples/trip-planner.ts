// A weekend trip planner: four tools over small in-memory data, a scripted model that asks for
// weather, flights and hotels in one batch (they run in parallel), then for a budget, then
// answers. No key, no network: `pnpm demo` runs it.
//
//   turnkit run packages/cli/examples/trip-planner.ts

import { defineTool } from '@turnkit/dispatch';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { z } from 'zod';
import type { ScenarioFile } from '@turnkit/cli';

const FORECASTS: Record<string, Record<string, { sky: string; highC: number; lowC: number }>> = {
  Lisbon: { '2025-06-14': { sky: 'sunny', highC: 27, lowC: 18 }, '2025-06-15': { sky: 'partly cloudy', highC: 25, lowC: 17 } },
  Porto: { '2025-06-14': { sky: 'showers', highC: 21, lowC: 15 }, '2025-06-15': { sky: 'cloudy', highC: 22, lowC: 15 } },
};

const FLIGHTS = [
  { id: 'TP557', from: 'BER', to: 'LIS', date: '2025-06-14', departs: '06:40', arrives: '09:15', priceEur: 142 },
  { id: 'FR1384', from: 'BER', to: 'LIS', date: '2025-06-14', departs: '13:05', arrives: '15:45', priceEur: 89 },
  { id: 'TP558', from: 'LIS', to: 'BER', date: '2025-06-16', departs: '19:30', arrives: '23:55', priceEur: 131 },
  { id: 'FR1385', from: 'LIS', to: 'BER', date: '2025-06-16', departs: '16:20', arrives: '20:50', priceEur: 97 },
];

const HOTELS = [
  { name: 'Casa do Rio', city: 'Lisbon', area: 'Alfama', nightlyEur: 128, rating: 4.6 },
  { name: 'Hotel Miradouro', city: 'Lisbon', area: 'Baixa', nightlyEur: 185, rating: 4.8 },
  { name: 'Pensão Azul', city: 'Lisbon', area: 'Graça', nightlyEur: 74, rating: 4.1 },
  { name: 'Ribeira Lofts', city: 'Porto', area: 'Ribeira', nightlyEur: 110, rating: 4.5 },
];

/** Pretend latency, so the parallel calls are visible in the timeline. */
const latency = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(new Error('cancelled'))), { once: true });
  });

const getWeather = defineTool({
  name: 'get_weather',
  description: 'The forecast for a city on a date (YYYY-MM-DD).',
  input: z.object({ city: z.string(), date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/) }),
  readOnly: true,
  execute: async ({ city, date }, ctx) => {
    await latency(40, ctx.signal);
    const forecast = FORECASTS[city]?.[date];
    if (forecast === undefined) throw new Error(`no forecast for ${city} on ${date}`);
    return { city, date, ...forecast };
  },
});

const searchFlights = defineTool({
  name: 'search_flights',
  description: 'Flights between two airports (IATA codes) on a date, cheapest first.',
  input: z.object({ from: z.string().length(3), to: z.string().length(3), date: z.string() }),
  readOnly: true,
  execute: async ({ from, to, date }, ctx) => {
    await latency(60, ctx.signal);
    return FLIGHTS.filter((f) => f.from === from && f.to === to && f.date === date).sort((a, b) => a.priceEur - b.priceEur);
  },
});

const searchHotels = defineTool({
  name: 'search_hotels',
  description: 'Hotels in a city under a nightly price, best rated first.',
  input: z.object({ city: z.string(), maxNightlyEur: z.number().positive() }),
  readOnly: true,
  execute: async ({ city, maxNightlyEur }, ctx) => {
    await latency(50, ctx.signal);
    return HOTELS.filter((h) => h.city === city && h.nightlyEur <= maxNightlyEur).sort((a, b) => b.rating - a.rating);
  },
});

const estimateBudget = defineTool({
  name: 'estimate_budget',
  description: 'Total cost of flights plus a hotel for a number of nights.',
  input: z.object({ flightIds: z.array(z.string()).min(1), hotel: z.string(), nights: z.number().int().positive() }),
  readOnly: true,
  execute: ({ flightIds, hotel, nights }) => {
    const flights = flightIds.map((id) => {
      const flight = FLIGHTS.find((f) => f.id === id);
      if (flight === undefined) throw new Error(`unknown flight ${id}`);
      return flight;
    });
    const stay = HOTELS.find((h) => h.name === hotel);
    if (stay === undefined) throw new Error(`unknown hotel ${hotel}`);
    const flightsEur = flights.reduce((sum, f) => sum + f.priceEur, 0);
    const hotelEur = stay.nightlyEur * nights;
    return { flightsEur, hotelEur, totalEur: flightsEur + hotelEur };
  },
});

export const scenario: ScenarioFile = {
  system: 'You plan short trips. Use the tools for facts; never invent prices.',
  input: 'Plan a weekend in Lisbon from Berlin, 14 to 16 June 2025, with a hotel under 150 euros a night.',
  tools: [getWeather, searchFlights, searchHotels, estimateBudget],
  model: ({ startAt }) =>
    scriptedModel([
      toolCalls(
        call('get_weather', { city: 'Lisbon', date: '2025-06-14' }),
        call('search_flights', { from: 'BER', to: 'LIS', date: '2025-06-14' }),
        call('search_flights', { from: 'LIS', to: 'BER', date: '2025-06-16' }),
        call('search_hotels', { city: 'Lisbon', maxNightlyEur: 150 }),
        { text: 'I will check the weather, flights both ways and hotels at once.', usage: { inputTokens: 412, outputTokens: 96 } },
      ),
      toolCalls(call('estimate_budget', { flightIds: ['FR1384', 'FR1385'], hotel: 'Casa do Rio', nights: 2 }), { usage: { inputTokens: 905, outputTokens: 38 } }),
      text(
        [
          'Your Lisbon weekend (14–16 June 2025):',
          '- Weather: sunny, 27 °C on Saturday.',
          '- Flights: FR1384 Sat 13:05 → 15:45 (89 €), back FR1385 Mon 16:20 → 20:50 (97 €).',
          '- Hotel: Casa do Rio in Alfama, 128 € a night, rated 4.6.',
          '- Total: 442 € (flights 186 €, hotel 256 € for 2 nights).',
        ].join('\n'),
        { usage: { inputTokens: 1010, outputTokens: 88 } },
      ),
    ], { startAt }),
};
